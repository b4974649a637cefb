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
}

/**
 * The handle() and failNext() of a Graph emulator: GraphErrors thrown by `route` become Meta's error
 * body, and queued failures are answered the way Meta answers them (throttling, error 2, code 190).
 */
export function graphFailingHandler(spec: GraphHandlerSpec): Pick<Emulator, "handle" | "failNext"> {
  const answer = (e: GraphError) => graphErrorResponse(e, spec.apiType);
  const throttled = spec.throttled ?? new GraphError(400, 4, "Application request limit reached");
  const unavailable = new GraphError(500, 2, "An unexpected error has occurred. Please retry your request later.");
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

const LONG_TTL_S = 60 * 86400;
const SHORT_TTL_MS = 3600_000;

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
}

/**
 * The token flow of Instagram Login and Threads: a code becomes a short-lived token (an hour), which the
 * long-lived exchange turns into a 60-day token, which refresh_access_token renews while it is valid.
 * Tokens travel as a bearer header or an access_token parameter.
 */
export class LongLivedTokens {
  private codes = new AuthorizationCodes();
  private tokens = new Map<string, { long: boolean; exp: number }>();
  private readonly clients = new Map([["sandbox", "sandbox"]]);

  constructor(private readonly spec: LongLivedTokenSpec) {}

  /** Answers the consent page and the three token calls; null for every other call. */
  async route(req: Request, path: string, url: URL): Promise<Response | null> {
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize")
      return this.codes.authorize(
        url,
        this.clients,
        () => new GraphError(400, 100, "client_id and redirect_uri are required"),
      );
    if (m === "POST" && (path === "/oauth/access_token" || path === "/oauth/token")) {
      const f = await graphForm(req);
      if (this.clients.get(f.get("client_id") ?? "") !== f.get("client_secret"))
        throw new GraphError(400, 101, "Error validating client secret.");
      if (!this.codes.redeem(f.get("code") ?? "", f.get("redirect_uri")))
        throw new GraphError(400, 100, "Invalid authorization code", 36007);
      return Response.json({ access_token: this.issue(false), ...this.spec.codeAnswer });
    }
    if (m === "GET" && path === "/access_token") {
      if (url.searchParams.get("grant_type") !== this.spec.exchangeGrant)
        throw new GraphError(400, 100, `grant_type must be ${this.spec.exchangeGrant}`);
      this.authed(req, url);
      return Response.json({ access_token: this.issue(true), token_type: "bearer", expires_in: LONG_TTL_S });
    }
    if (m === "GET" && path === "/refresh_access_token") {
      const t = this.tokens.get(this.presented(req, url));
      if (url.searchParams.get("grant_type") !== this.spec.refreshGrant || !t?.long || t.exp <= Date.now())
        throw new GraphError(400, 190, "The access token cannot be refreshed: it is invalid or expired.");
      return Response.json({ access_token: this.issue(true), token_type: "bearer", expires_in: LONG_TTL_S });
    }
    return null;
  }

  /** Throws the platform's expired-session error unless the call carries a live token. */
  authed(req: Request, url: URL): void {
    const t = this.tokens.get(this.presented(req, url));
    if (!t || t.exp <= Date.now()) throw this.expired();
  }

  /** The platform's answer to an expired token. */
  expired(): GraphError {
    return new GraphError(this.spec.expiredStatus, 190, "Error validating access token: Session has expired.", 463);
  }

  reset(): void {
    this.codes.clear();
    this.tokens = new Map();
  }

  snapshot(): unknown {
    return { codes: this.codes.snapshot(), tokens: this.tokens };
  }

  restore(saved: unknown): void {
    const s = saved as { codes: unknown; tokens: Map<string, { long: boolean; exp: number }> };
    this.codes.restore(s.codes);
    this.tokens = s.tokens;
  }

  private presented(req: Request, url: URL): string {
    return (
      /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? url.searchParams.get("access_token") ?? ""
    );
  }

  private issue(long: boolean): string {
    const token = `${this.spec.prefix}${randomBytes(20).toString("hex")}`;
    this.tokens.set(token, { long, exp: Date.now() + (long ? LONG_TTL_S * 1000 : SHORT_TTL_MS) });
    return token;
  }
}
