/**
 * TikTok's OAuth v2 as the emulator serves it: the consent page, the token endpoint (client_key and
 * secret in the form, code and rotating refresh grants) and, for each token, the scopes its user granted,
 * which the API endpoints check. Sources and dates: ./emulator-rules.ts.
 */
import { randomBytes } from "node:crypto";
import { OAuthServer, type OAuthRefusal } from "../../src/platform/emulator-kit.ts";
import type { StatePart } from "../../src/platform/emulator-state.ts";
import { ACCESS_TTL_S, APP_SCOPES, consentScopes, REFRESH_TTL_S } from "./emulator-rules.ts";

// TikTok's OAuth errors: {error, error_description, log_id} ("OAuth Error Handling", oauth-error-handling).
const REFUSALS: Record<OAuthRefusal, [number, string, string]> = {
  invalid_client: [401, "invalid_client", "Client key or secret is incorrect."],
  invalid_code: [400, "invalid_grant", "Authorization code is expired."],
  redirect_mismatch: [400, "invalid_grant", "Authorization code is expired."],
  verifier_mismatch: [400, "invalid_grant", "Code verifier is invalid."],
  invalid_refresh_token: [400, "invalid_grant", "Refresh token is invalid or expired."],
  unsupported_grant_type: [400, "unsupported_grant_type", "grant_type is not supported."],
};

function refuse(why: OAuthRefusal): Response {
  const [status, error, error_description] = REFUSALS[why];
  return Response.json({ error, error_description, log_id: randomBytes(16).toString("hex") }, { status });
}

interface Grants {
  /** Scopes by authorization code, until the code is exchanged. */
  codes: Map<string, string[]>;
  /** Scopes by access token. */
  access: Map<string, string[]>;
  /** Scopes and expiry (ms) by refresh token. */
  refresh: Map<string, { scopes: string[]; exp: number }>;
  /** The user grants only these of the requested scopes (tests); null grants all requested. */
  only: string[] | null;
}

const noGrants = (): Grants => ({ codes: new Map(), access: new Map(), refresh: new Map(), only: null });

export class TikTokOAuth implements StatePart {
  private server: OAuthServer;
  private grants = noGrants();

  constructor(openId: string) {
    this.server = new OAuthServer({
      clientAuth: "body",
      clientIdParam: "client_key",
      accessTtlS: ACCESS_TTL_S,
      refresh: "rotating",
      newToken: (kind) => `${kind === "access" ? "act" : "rft"}.${randomBytes(20).toString("hex")}`,
      // `scope` is added per token: the scopes the user granted.
      answer: { open_id: openId, refresh_expires_in: REFRESH_TTL_S, token_type: "Bearer" },
      refuse,
    });
  }

  /** The consent page: a code for the scopes the user granted of those requested. */
  authorize(url: URL, refuseRequest: () => Error): Response {
    const res = this.server.authorize(url, refuseRequest);
    const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
    this.grants.codes.set(code, consentScopes(url.searchParams.get("scope"), this.grants.only));
    return res;
  }

  /** The token endpoint, answering with the granted scopes and refusing refresh tokens past 180 days. */
  async token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.clone().text());
    const refreshing = form.get("grant_type") === "refresh_token";
    const spent = refreshing ? (form.get("refresh_token") ?? "") : (form.get("code") ?? "");
    const held = refreshing ? this.grants.refresh.get(spent) : undefined;
    if (held && held.exp <= Date.now()) return refuse("invalid_refresh_token");
    // Sandbox codes skip the consent page: they grant everything the app is approved for.
    const scopes = (refreshing ? held?.scopes : this.grants.codes.get(spent)) ?? APP_SCOPES;
    const res = await this.server.token(req);
    if (!res.ok) return res;
    const body = (await res.json()) as { access_token: string; refresh_token?: string };
    if (refreshing) this.grants.refresh.delete(spent);
    else this.grants.codes.delete(spent);
    this.grants.access.set(body.access_token, scopes);
    if (body.refresh_token)
      this.grants.refresh.set(body.refresh_token, { scopes, exp: Date.now() + REFRESH_TTL_S * 1000 });
    return Response.json({ ...body, scope: scopes.join(",") });
  }

  /** Whether an API call carries a live access token. */
  bearer(req: Request): boolean {
    return this.server.bearer(req);
  }

  /** The scopes granted to the token a call carries. */
  scopesOf(req: Request): string[] {
    const token = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
    return this.grants.access.get(token) ?? APP_SCOPES;
  }

  grantOnly(scopes: string[] | null): void {
    this.grants.only = scopes && [...scopes];
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
