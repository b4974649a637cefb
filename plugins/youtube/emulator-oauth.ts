/**
 * Google's OAuth as the YouTube emulator serves it: authorize (PKCE), token (client id and secret in the
 * body; code and refresh grants; one-hour access tokens; refresh tokens kept), and, for each token, the
 * scopes its user granted. Google's consent screen lets a user untick some of the scopes an app asks for
 * ("granular permissions": "the application must check what scopes are granted by the users and can't
 * assume users grant all requested scopes", developers.google.com/identity/protocols/oauth2/resources/
 * granular-permissions, checked 2026-11-26); the token answer's `scope` lists the granted ones,
 * space-separated.
 */
import { randomBytes } from "node:crypto";
import { OAuthServer } from "../../src/platform/emulator-kit.ts";
import type { StatePart } from "../../src/platform/emulator-state.ts";

const ACCESS_TTL_S = 3600;

/** What the emulated Google project may ask for: every YouTube Data API scope. */
const KNOWN_SCOPES = [
  "https://www.googleapis.com/auth/youtube",
  "https://www.googleapis.com/auth/youtube.force-ssl",
  "https://www.googleapis.com/auth/youtube.readonly",
  "https://www.googleapis.com/auth/youtube.upload",
  "https://www.googleapis.com/auth/youtubepartner",
  "https://www.googleapis.com/auth/yt-analytics.readonly",
];

interface Grants {
  codes: Map<string, string[]>;
  access: Map<string, string[]>;
  refresh: Map<string, string[]>;
  /** The user grants only these of the requested scopes (tests); null grants all requested. */
  only: string[] | null;
}

const noGrants = (): Grants => ({ codes: new Map(), access: new Map(), refresh: new Map(), only: null });

export class GoogleOAuth implements StatePart {
  private server: OAuthServer;
  private grants = noGrants();

  constructor() {
    this.server = new OAuthServer({
      clientAuth: "body",
      accessTtlS: ACCESS_TTL_S,
      refresh: "kept",
      newToken: (kind) =>
        kind === "access" ? `ya29.${randomBytes(16).toString("hex")}` : `1//${randomBytes(16).toString("hex")}`,
      answer: { token_type: "Bearer" },
      refuse(why) {
        if (why === "invalid_client")
          return Response.json({ error: why, error_description: "The OAuth client was not found." }, { status: 401 });
        if (why === "unsupported_grant_type") return Response.json({ error: why }, { status: 400 });
        const description =
          why === "verifier_mismatch"
            ? "Invalid code verifier."
            : why === "invalid_refresh_token"
              ? "Token has been expired or revoked."
              : "Malformed auth code.";
        return Response.json({ error: "invalid_grant", error_description: description }, { status: 400 });
      },
    });
  }

  authorize(url: URL, refuseRequest: () => Error): Response {
    const res = this.server.authorize(url, refuseRequest);
    const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
    const asked = (url.searchParams.get("scope") ?? "").split(" ").filter((s) => KNOWN_SCOPES.includes(s));
    this.grants.codes.set(code, this.grants.only ? asked.filter((s) => this.grants.only!.includes(s)) : asked);
    return res;
  }

  async token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.clone().text());
    const refreshing = form.get("grant_type") === "refresh_token";
    const spent = refreshing ? (form.get("refresh_token") ?? "") : (form.get("code") ?? "");
    // Sandbox codes skip the consent page: they grant every scope.
    const scopes = (refreshing ? this.grants.refresh.get(spent) : this.grants.codes.get(spent)) ?? KNOWN_SCOPES;
    const res = await this.server.token(req);
    if (!res.ok) return res;
    const body = (await res.json()) as { access_token: string; refresh_token?: string };
    if (!refreshing) this.grants.codes.delete(spent);
    this.grants.access.set(body.access_token, scopes);
    if (body.refresh_token) this.grants.refresh.set(body.refresh_token, scopes);
    return Response.json({ ...body, scope: scopes.join(" ") });
  }

  bearer(req: Request): boolean {
    return this.server.bearer(req);
  }

  /** The scopes granted to the token a call carries. */
  scopesOf(req: Request): string[] {
    const token = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
    return this.grants.access.get(token) ?? KNOWN_SCOPES;
  }

  grantOnly(scopes: string[] | null): void {
    this.grants.only = scopes && [...scopes];
  }

  expireAll(): void {
    this.server.expireAll();
  }

  reset(): void {
    this.server.reset();
    this.grants = noGrants();
  }

  snapshot(): unknown {
    return { server: this.server.snapshot(), grants: this.grants };
  }

  restore(saved: unknown): void {
    const s = saved as { server: unknown; grants?: Grants };
    this.server.restore(s.server);
    this.grants = s.grants ?? noGrants();
  }
}
