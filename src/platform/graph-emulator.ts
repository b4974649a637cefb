/**
 * What the emulators of Meta's Graph APIs share (Instagram and Threads; Facebook for the error body):
 * Graph errors, the container ids, form bodies, media the platform downloads itself, and the
 * Instagram/Threads token flow (code exchange, long-lived exchange, refresh of a long-lived token).
 */
import { randomBytes } from "node:crypto";
import { AuthorizationCodes, failingHandler, type FailurePlan } from "./emulator-kit.ts";
import type { Emulator } from "./sdk.ts";

export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly subcode?: number,
  ) {
    super(message);
  }
}

/** Meta's error body; `apiType` is the exception type the platform names its own refusals with. */
export const graphErrorResponse = (e: GraphError, apiType: string) =>
  Response.json(
    {
      error: {
        message: e.message,
        type: e.code === 190 ? "OAuthException" : apiType,
        code: e.code,
        ...(e.subcode && { error_subcode: e.subcode }),
        fbtrace_id: randomBytes(6).toString("hex"),
      },
    },
    { status: e.status },
  );

export interface GraphHandlerSpec {
  failures: FailurePlan;
  canFail(path: string): boolean;
  route(req: Request, path: string): Promise<Response>;
  /** The exception type of the platform's own refusals (IGApiException, THApiException, GraphMethodException). */
  apiType: string;
  /** How the platform answers throttling (default: code 4, the application limit). */
  throttled?: GraphError;
  /** How the platform answers an expired token. */
  expired: GraphError;
  /** How it answers a token lacking a permission (default: Meta's (#10) with 403; Facebook Pages say (#200)). */
  forbidden?: GraphError;
}

/**
 * The handle() and failNext() of a Graph emulator: GraphErrors thrown by `route` become Meta's error
 * body, and queued failures are answered the way Meta answers them (throttling, error 2, code 190, a
 * missing permission).
 */
export function graphFailingHandler(spec: GraphHandlerSpec): Pick<Emulator, "handle" | "failNext"> {
  const answer = (e: GraphError) => graphErrorResponse(e, spec.apiType);
  const throttled = spec.throttled ?? new GraphError(400, 4, "Application request limit reached");
  const unavailable = new GraphError(500, 2, "An unexpected error has occurred. Please retry your request later.");
  const forbidden =
    spec.forbidden ?? new GraphError(403, 10, "(#10) Application does not have permission for this action");
  return failingHandler({
    failures: spec.failures,
    canFail: spec.canFail,
    failureResponse: (f) =>
      f.kind === "rate_limit"
        ? answer(throttled)
        : f.kind === "server_error"
          ? answer(unavailable)
          : f.kind === "auth_expired"
            ? answer(spec.expired)
            : f.kind === "forbidden"
              ? answer(forbidden)
              : null,
    route: spec.route,
    error: GraphError,
    errorResponse: answer,
  });
}

/** Graph ids: long decimal numbers, starting at the platform's base. */
export const graphId = (base: bigint) => () => String(base + BigInt(randomBytes(6).readUIntBE(0, 6)));

/** Graph calls take a form or a JSON body alike. */
export async function graphForm(req: Request): Promise<URLSearchParams> {
  const text = await req.text();
  if ((req.headers.get("content-type") ?? "").includes("json")) return new URLSearchParams(JSON.parse(text || "{}"));
  return new URLSearchParams(text);
}

// Graph platforms download media from a URL they are given; the helper is the emulator kit's.
export { downloadedType } from "./emulator-kit.ts";

// Instagram: "Refresh a long-lived access token that is at least 24 hours old but has not expired.
// Refreshed tokens are valid for 60 days from the date at which they are refreshed."
// (developers.facebook.com/docs/instagram-platform/reference/refresh_access_token, checked 2026-11-26)
// Threads: "Long-lived tokens are valid for 60 days and can be refreshed as long as they are at least 24
// hours old but have not expired ... Tokens that have not been refreshed in 60 days will expire and can no
// longer be refreshed." (developers.facebook.com/docs/threads/get-started/long-lived-tokens, same date)
// Short-lived tokens last one hour (the same pages).
const LONG_TTL_S = 60 * 86400;
const SHORT_TTL_MS = 3600_000;
const REFRESHABLE_AGE_MS = 86_400_000;

export interface LongLivedTokenSpec {
  /** How the platform's tokens start (IG, TH). */
  prefix: string;
  /** grant_type of the long-lived exchange and of the refresh (ig_exchange_token, ig_refresh_token). */
  exchangeGrant: string;
  refreshGrant: string;
  /** The status of an expired-token answer (Instagram 400, Threads 401). */
  expiredStatus: number;
  /** What the code exchange answers besides the token (the user id in the platform's shape). */
  codeAnswer: Record<string, unknown>;
  /** The emulator's clock in ms (default Date.now): tests age tokens with their own clock. */
  now?: () => number;
}

interface Token {
  long: boolean;
  issued: number;
  exp: number;
  /** The permissions the user granted on the consent page (absent in state saved before they were kept). */
  scopes?: string[];
}

/**
 * The token flow of Instagram Login and Threads: a code becomes a short-lived token (an hour), which the
 * long-lived exchange turns into a 60-day token, which refresh_access_token renews while it is valid.
 * Tokens travel as a bearer header or an access_token parameter.
 */
export class LongLivedTokens {
  private codes = new AuthorizationCodes();
  /** The scope each issued code was consented with. */
  private codeScopes = new Map<string, string[]>();
  private tokens = new Map<string, Token>();
  private readonly clients = new Map([["sandbox", "sandbox"]]);
  /** Added to the clock by advance(): sandbox and conformance runs age tokens without waiting a day. */
  private offset = 0;

  constructor(private readonly spec: LongLivedTokenSpec) {}

  private now(): number {
    return (this.spec.now?.() ?? Date.now()) + this.offset;
  }

  /** Moves this emulator's clock forward. */
  advance(ms: number): void {
    this.offset += ms;
  }

  /** Answers the consent page and the three token calls; null for every other call. */
  async route(req: Request, path: string, url: URL): Promise<Response | null> {
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize") {
      const consent = this.codes.authorize(
        url,
        this.clients,
        () => new GraphError(400, 100, "client_id and redirect_uri are required"),
      );
      const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
      // Meta's scope parameter is comma-separated; the user grants what was asked.
      this.codeScopes.set(code, (url.searchParams.get("scope") ?? "").split(",").filter(Boolean));
      return consent;
    }
    if (m === "POST" && (path === "/oauth/access_token" || path === "/oauth/token")) {
      const f = await graphForm(req);
      if (this.clients.get(f.get("client_id") ?? "") !== f.get("client_secret"))
        throw new GraphError(400, 101, "Error validating client secret.");
      const code = f.get("code") ?? "";
      if (!this.codes.redeem(code, f.get("redirect_uri")))
        throw new GraphError(400, 100, "Invalid authorization code", 36007);
      return Response.json({ access_token: this.issue(false, this.codeScopes.get(code)), ...this.spec.codeAnswer });
    }
    if (m === "GET" && path === "/access_token") {
      if (url.searchParams.get("grant_type") !== this.spec.exchangeGrant)
        throw new GraphError(400, 100, `grant_type must be ${this.spec.exchangeGrant}`);
      const short = this.authed(req, url);
      return Response.json({
        access_token: this.issue(true, short.scopes),
        token_type: "bearer",
        expires_in: LONG_TTL_S,
      });
    }
    if (m === "GET" && path === "/refresh_access_token") {
      if (url.searchParams.get("grant_type") !== this.spec.refreshGrant)
        throw new GraphError(400, 100, `grant_type must be ${this.spec.refreshGrant}`);
      const t = this.tokens.get(this.presented(req, url));
      // An expired (or unknown) token is Meta's expired-session error: nothing brings it back.
      if (!t || t.exp <= this.now()) throw this.expired();
      if (!t.long) throw new GraphError(400, 190, "Only a long-lived access token can be refreshed.");
      // Meta's words are "at least 24 hours old"; the shape of its refusal is not documented.
      if (this.now() - t.issued < REFRESHABLE_AGE_MS)
        throw new GraphError(400, 100, "The access token must be at least 24 hours old to be refreshed.");
      return Response.json({ access_token: this.issue(true, t.scopes), token_type: "bearer", expires_in: LONG_TTL_S });
    }
    return null;
  }

  /**
   * The live token the call carries, else the platform's expired-session error; with `permissions`, each
   * must have been granted, else Meta's permission error (code 10).
   */
  authed(req: Request, url: URL, ...permissions: string[]): Token {
    const t = this.tokens.get(this.presented(req, url));
    if (!t || t.exp <= this.now()) throw this.expired();
    const missing = permissions.find((p) => t.scopes && !t.scopes.includes(p));
    if (missing)
      throw new GraphError(400, 10, `(#10) Application does not have permission for this action: ${missing}`);
    return t;
  }

  /** The platform's answer to an expired token. */
  expired(): GraphError {
    return new GraphError(this.spec.expiredStatus, 190, "Error validating access token: Session has expired.", 463);
  }

  reset(): void {
    this.codes.clear();
    this.codeScopes = new Map();
    this.tokens = new Map();
    this.offset = 0;
  }

  snapshot(): unknown {
    return { codes: this.codes.snapshot(), tokens: this.tokens };
  }

  restore(saved: unknown): void {
    const s = saved as { codes: unknown; tokens: Map<string, Token> };
    this.codes.restore(s.codes);
    this.tokens = s.tokens;
  }

  private presented(req: Request, url: URL): string {
    return (
      /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? url.searchParams.get("access_token") ?? ""
    );
  }

  private issue(long: boolean, scopes: string[] | undefined): string {
    const token = `${this.spec.prefix}${randomBytes(20).toString("hex")}`;
    const issued = this.now();
    this.tokens.set(token, { long, issued, exp: issued + (long ? LONG_TTL_S * 1000 : SHORT_TTL_MS), scopes });
    return token;
  }
}
