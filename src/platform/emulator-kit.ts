/**
 * Pieces every emulator needs and no platform owns: the queue of failures tests ask for, holding a
 * response to simulate a timeout after the work was done, resettable state, an OAuth 2 authorization
 * server, and serving an emulator on a loopback port.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Emulator, FailureSpec } from "./sdk.ts";

interface PendingFailure extends FailureSpec {
  left: number;
  /** Matching calls still to let through (FailureSpec.skip). */
  pass: number;
}

/** Failures queued with failNext(), consumed by the calls they match, in the order they were asked for. */
export class FailurePlan {
  private pending: PendingFailure[] = [];

  add(spec: FailureSpec): void {
    this.pending.push({ ...spec, left: Math.max(1, spec.times ?? 1), pass: Math.max(0, spec.skip ?? 0) });
  }

  /**
   * The failure that applies to a call, if any. `names` are what `on` may match: the request path and
   * the platform's method name. A spec without `on` applies to whatever call comes next.
   */
  take(...names: string[]): FailureSpec | undefined {
    const i = this.pending.findIndex((f) => !f.on || names.some((n) => n.includes(f.on!)));
    if (i < 0) return undefined;
    const f = this.pending[i];
    if (f.pass > 0) {
      f.pass -= 1;
      return undefined;
    }
    f.left -= 1;
    if (f.left <= 0) this.pending.splice(i, 1);
    return f;
  }

  clear(): void {
    this.pending = [];
  }
}

/** Default hold for a simulated timeout: longer than any client should wait. */
export const DEFAULT_HOLD_MS = 30_000;

/** Holds a finished response back, so the caller times out although the work was done. */
export async function holdThen(res: Response, ms = DEFAULT_HOLD_MS): Promise<Response> {
  await new Promise((r) => setTimeout(r, ms));
  return res;
}

/** How one platform's emulator answers calls; the order every emulator applies them in is fixed by failingHandler. */
export interface FailingRoutes<E extends Error> {
  failures: FailurePlan;
  /** Whether queued failures apply to a call: platforms fail API calls, not sign-in or upload endpoints. */
  canFail(path: string): boolean;
  /** What a failure's `on` may match; the path unless the platform also names its calls (XRPC, Bot API methods). */
  failureNames?(path: string): string[];
  /** The platform's answer to a queued failure, or null where it has none (timeouts are held instead). */
  failureResponse(f: FailureSpec, req: Request): Response | null;
  route(req: Request, path: string): Promise<Response>;
  /** The platform's error class thrown by `route`, and the error body it answers with; anything else propagates. */
  error: abstract new (...args: never[]) => E;
  errorResponse(e: E): Response;
}

/**
 * The emulator's handle() and failNext(): a queued failure answers the call instead of the platform,
 * except a timeout, where the call is done and its response held back so the client gives up first.
 */
export function failingHandler<E extends Error>(r: FailingRoutes<E>): Pick<Emulator, "handle" | "failNext"> {
  return {
    async handle(req, path) {
      const failure = r.canFail(path) ? r.failures.take(...(r.failureNames?.(path) ?? [path])) : undefined;
      if (failure && failure.kind !== "timeout" && !failure.afterWork) {
        const res = r.failureResponse(failure, req);
        if (res) return res;
      }
      let res: Response;
      try {
        res = await r.route(req, path);
      } catch (e) {
        if (!(e instanceof r.error)) throw e;
        res = r.errorResponse(e);
      }
      if (failure?.afterWork) return r.failureResponse(failure, req) ?? res;
      return failure?.kind === "timeout" ? holdThen(res, failure.delayMs) : res;
    },
    failNext: (spec) => r.failures.add(spec),
  };
}

/**
 * An emulator's mutable state, made afresh by `init` when the emulator is created and again on every
 * reset(), so a reset can never forget a field.
 */
export function resettable<S extends object>(init: () => S): S & { reset(): void } {
  const state = init() as S & { reset(): void };
  Object.defineProperty(state, "reset", { value: () => Object.assign(state, init()), enumerable: false });
  return state;
}

/** engage() of an emulator's test API: adds each given count to the post's counter of the same name. */
export function addCounts<K extends string>(
  target: NoInfer<Record<K, number>>,
  counts: Partial<Record<K, number>>,
): void {
  for (const [k, v] of Object.entries(counts) as [K, number | undefined][]) target[k] += v ?? 0;
}

const S256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

interface IssuedCode {
  client: string;
  redirect: string;
  challenge: string | null;
  /** The scope the consent asked for, as the authorization URL carried it. */
  scope?: string | null;
  exp: number;
  used: boolean;
}

/**
 * Authorization codes of the OAuth code flow as the platforms hand them out: one per consent, bound to
 * its client, redirect_uri and PKCE challenge, good once (and, where the platform says so, for a short
 * time). Codes starting "sandbox_" are taken without a consent page, so a sandbox profile connects
 * without a browser.
 */
export class AuthorizationCodes {
  private codes = new Map<string, IssuedCode>();

  constructor(private readonly ttlMs = Infinity) {}

  /**
   * The consent page as a user who says yes meets it: a redirect back with a fresh code and the state.
   * An unknown client or a missing redirect_uri throws the platform's own `refuse()` error.
   */
  authorize(
    url: URL,
    clients: { has(id: string): boolean },
    refuse: () => Error,
    clientIdParam = "client_id",
  ): Response {
    const redirect = url.searchParams.get("redirect_uri");
    const client = url.searchParams.get(clientIdParam) ?? "";
    if (!clients.has(client) || !redirect) throw refuse();
    const code = randomBytes(12).toString("hex");
    this.codes.set(code, {
      client,
      redirect,
      challenge: url.searchParams.get("code_challenge"),
      scope: url.searchParams.get("scope"),
      exp: Date.now() + this.ttlMs,
      used: false,
    });
    const back = new URL(redirect);
    back.searchParams.set("code", code);
    back.searchParams.set("state", url.searchParams.get("state") ?? "");
    return new Response(null, { status: 302, headers: { location: back.toString() } });
  }

  /** Uses up a code: false when it was never issued, was used already, expired, or was issued for another redirect_uri. */
  redeem(code: string, redirect: string | null | undefined): boolean {
    return this.spend(code, redirect) === null;
  }

  /**
   * Uses up a code and says what was wrong with it, if anything: the code itself (unknown, used,
   * expired, another client's), its redirect_uri, or its PKCE verifier (checked where the consent
   * carried a challenge).
   */
  spend(
    code: string,
    redirect: string | null | undefined,
    p: { client?: string; verifier?: string | null } = {},
  ): null | "invalid_code" | "redirect_mismatch" | "verifier_mismatch" {
    if (code.startsWith("sandbox_")) return null;
    const issued = this.codes.get(code);
    if (!issued || issued.used || issued.exp < Date.now() || (p.client !== undefined && issued.client !== p.client))
      return "invalid_code";
    if (issued.redirect !== redirect) return "redirect_mismatch";
    if (issued.challenge !== null && S256(p.verifier ?? "") !== issued.challenge) return "verifier_mismatch";
    issued.used = true;
    return null;
  }

  /** The scope a code's consent asked for; null for sandbox codes and codes never issued. */
  scopeOf(code: string): string | null {
    return this.codes.get(code)?.scope ?? null;
  }

  clear(): void {
    this.codes = new Map();
  }

  snapshot(): unknown {
    return this.codes;
  }

  restore(saved: unknown): void {
    this.codes = saved as Map<string, IssuedCode>;
  }
}

/** Why a token endpoint said no; each platform words and shapes the answer its own way. */
export type OAuthRefusal =
  | "invalid_client"
  | "invalid_code"
  | "redirect_mismatch"
  | "verifier_mismatch"
  | "invalid_refresh_token"
  | "unsupported_grant_type";

export interface OAuthServerSpec {
  /** How the token endpoint authenticates the client: HTTP Basic, or id and secret in the form. */
  clientAuth: "basic" | "body";
  /** The form field naming the client (TikTok: client_key). */
  clientIdParam?: string;
  /** Public clients may name themselves in the form without a secret (X, for PKCE apps). */
  publicClients?: boolean;
  /** Codes die this long after the consent (X: 30 s); default: only when used. */
  codeTtlMs?: number;
  /** Access-token lifetime; absent: tokens never expire (Vimeo). */
  accessTtlS?: number;
  /**
   * The refresh_token grant: absent, there is none; "rotating", each refresh token is good once and the
   * answer carries the next; "kept", the token stays good and answers carry none (Google, Reddit);
   * "reissued", answers carry a new one and the old ones stay good (Snap).
   */
  refresh?: "rotating" | "kept" | "reissued";
  /** The platform's token formats (default: 24 random bytes, base64url). */
  newToken?(kind: "access" | "refresh"): string;
  /** The rest of a token answer (token_type, scope and whatever the platform adds). */
  answer: Record<string, unknown>;
  /**
   * Platforms whose consent screen lets the user untick scopes (Google's granular permissions, TikTok):
   * the scopes the emulated app may be granted. A consent then grants those asked for that are among
   * them (narrowed by grantOnly), a sandbox code grants them all, and each token answer lists the granted
   * scopes joined by `scopeSeparator` (default a space).
   */
  grantable?: readonly string[];
  scopeSeparator?: string;
  /** How long a refresh token lives (TikTok: 365 days); absent, until it is spent or revoked. */
  refreshTtlS?: number;
  /** The platform's answer to a refused token request (or a thrown error of its own). */
  refuse(why: OAuthRefusal): Response;
}

const randomToken = () => randomBytes(24).toString("base64url");

/**
 * The OAuth 2 authorization server of an emulated platform: the consent redirect, the token endpoint's
 * authorization_code and refresh_token grants, access-token expiry, and checking the bearer token of an
 * API call. Each platform supplies its token formats, its extra answer fields and how it refuses.
 */
export class OAuthServer {
  readonly codes: AuthorizationCodes;
  private access = new Map<string, number>();
  private refreshes = new Set<string>();
  /** The scope each access and refresh token was granted (the consent's), where the consent named one. */
  private scopes = new Map<string, string>();
  /** When each refresh token dies, for platforms whose refresh tokens expire (spec.refreshTtlS). */
  private refreshExp = new Map<string, number>();
  /** The scopes the next consents grant at most: a user unticking boxes (tests); null grants what is asked. */
  private only: string[] | null = null;
  private clients: Map<string, string>;

  constructor(
    private readonly spec: OAuthServerSpec,
    private readonly initialClients: Record<string, string> = { sandbox: "sandbox" },
  ) {
    this.codes = new AuthorizationCodes(spec.codeTtlMs);
    this.clients = new Map(Object.entries(initialClients));
  }

  /** Registers another OAuth app, as a developer would in the platform's console. */
  registerClient(id: string, secret: string): void {
    this.clients.set(id, secret);
  }

  /** The consent page; `refuse` is the platform's error for an unknown client or a missing redirect_uri. */
  authorize(url: URL, refuse: () => Error): Response {
    const grantable = this.spec.grantable;
    if (!grantable) return this.codes.authorize(url, this.clients, refuse, this.spec.clientIdParam);
    // The code remembers what the user granted: the grantable scopes asked for, narrowed by grantOnly.
    const asked = (url.searchParams.get("scope") ?? "").split(/[\s,]+/).filter(Boolean);
    const granted = asked.filter((s) => grantable.includes(s) && (this.only === null || this.only.includes(s)));
    const consent = new URL(url);
    consent.searchParams.set("scope", granted.join(this.separator));
    return this.codes.authorize(consent, this.clients, refuse, this.spec.clientIdParam);
  }

  /** The next consents grant only these of the scopes asked for (a user unticking some); null: all. */
  grantOnly(scopes: string[] | null): void {
    this.only = scopes && [...scopes];
  }

  /** The scopes the token a call presented was granted (a sandbox token: every grantable one). */
  scopesOf(req: Request): string[] {
    const token = this.presented(req);
    const given =
      (token !== undefined && this.scopes.get(token)) ||
      (this.spec.grantable?.join(" ") ?? String(this.spec.answer.scope ?? ""));
    return given.split(/[\s,]+/).filter(Boolean);
  }

  private get separator(): string {
    return this.spec.scopeSeparator ?? " ";
  }

  /** The token endpoint: a form (or JSON) body with the grant, the client authenticated as the platform wants. */
  async token(req: Request): Promise<Response> {
    const text = await req.text();
    const form = (req.headers.get("content-type") ?? "").includes("json")
      ? new URLSearchParams(JSON.parse(text || "{}") as Record<string, string>)
      : new URLSearchParams(text);
    const client = this.client(req, form);
    if (client === null) return this.spec.refuse("invalid_client");
    const grant = form.get("grant_type");
    if (grant === "authorization_code") {
      const scope =
        this.codes.scopeOf(form.get("code") ?? "") ??
        (this.spec.grantable ? this.spec.grantable.join(this.separator) : null);
      const wrong = this.codes.spend(form.get("code") ?? "", form.get("redirect_uri"), {
        client,
        verifier: form.get("code_verifier"),
      });
      return wrong ? this.spec.refuse(wrong) : Response.json(this.issue(this.spec.refresh !== undefined, scope));
    }
    if (grant === "refresh_token" && this.spec.refresh) {
      const token = form.get("refresh_token") ?? "";
      if (!this.refreshes.has(token) || (this.refreshExp.get(token) ?? Infinity) <= Date.now())
        return this.spec.refuse("invalid_refresh_token");
      if (this.spec.refresh === "rotating") {
        this.refreshes.delete(token);
        this.refreshExp.delete(token);
      }
      return Response.json(this.issue(this.spec.refresh !== "kept", this.scopes.get(token) ?? null));
    }
    return this.spec.refuse("unsupported_grant_type");
  }

  /** Whether an API call carries a live access token. */
  bearer(req: Request): boolean {
    const token = this.presented(req);
    const exp = token === undefined ? undefined : this.access.get(token);
    return exp !== undefined && exp > Date.now();
  }

  /**
   * Whether the token a call presented was granted a scope: the scopes its consent asked for, or, for
   * tokens from sandbox codes (no consent page), the scope the token answer names.
   */
  granted(req: Request, scope: string): boolean {
    return this.scopesOf(req).includes(scope);
  }

  /** Expires the token a call presented (a failure test's "auth_expired"). */
  expire(req: Request): void {
    const token = this.presented(req);
    if (token !== undefined && this.access.has(token))
      this.access.set(token, Math.min(this.access.get(token)!, Date.now()));
  }

  /** Expires every access token now: the next call answers 401 until a refresh. */
  expireAll(): void {
    for (const [token, exp] of this.access) this.access.set(token, Math.min(exp, Date.now()));
  }

  reset(): void {
    this.codes.clear();
    this.access = new Map();
    this.refreshes = new Set();
    this.scopes = new Map();
    this.refreshExp = new Map();
    this.only = null;
    this.clients = new Map(Object.entries(this.initialClients));
  }

  snapshot(): unknown {
    return {
      codes: this.codes.snapshot(),
      access: this.access,
      refreshes: this.refreshes,
      clients: this.clients,
      scopes: this.scopes,
      refreshExp: this.refreshExp,
      only: this.only,
    };
  }

  restore(saved: unknown): void {
    const s = saved as {
      codes: unknown;
      access: Map<string, number>;
      refreshes: Set<string>;
      clients: Map<string, string>;
      scopes?: Map<string, string>;
      refreshExp?: Map<string, number>;
      only?: string[] | null;
    };
    this.codes.restore(s.codes);
    this.access = s.access;
    this.refreshes = s.refreshes;
    this.clients = s.clients;
    // State saved before scopes were kept has none: its tokens fall back to the answer's scope.
    this.scopes = s.scopes ?? new Map();
    this.refreshExp = s.refreshExp ?? new Map();
    this.only = s.only ?? null;
  }

  private presented(req: Request): string | undefined {
    return /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
  }

  /** The authenticated client's id, or null when the client is unknown or its secret wrong. */
  private client(req: Request, form: URLSearchParams): string | null {
    const basic = /^Basic (.+)$/.exec(req.headers.get("authorization") ?? "");
    if (this.spec.clientAuth === "basic" && basic) {
      const [id, secret] = Buffer.from(basic[1], "base64").toString().split(":").map(decodeURIComponent);
      return id && this.clients.get(id) === secret ? id : null;
    }
    const id = form.get(this.spec.clientIdParam ?? "client_id") ?? "";
    if (this.spec.clientAuth === "body") return id && this.clients.get(id) === form.get("client_secret") ? id : null;
    return this.spec.publicClients && this.clients.has(id) ? id : null;
  }

  private issue(withRefresh: boolean, scope: string | null): Record<string, unknown> {
    const make = this.spec.newToken ?? randomToken;
    const access = make("access");
    const ttl = this.spec.accessTtlS;
    this.access.set(access, ttl === undefined ? Infinity : Date.now() + ttl * 1000);
    const refresh = withRefresh ? make("refresh") : undefined;
    if (refresh) this.refreshes.add(refresh);
    if (refresh && this.spec.refreshTtlS !== undefined)
      this.refreshExp.set(refresh, Date.now() + this.spec.refreshTtlS * 1000);
    if (scope !== null) {
      this.scopes.set(access, scope);
      if (refresh) this.scopes.set(refresh, scope);
    }
    return {
      access_token: access,
      ...(ttl !== undefined && { expires_in: ttl }),
      ...(refresh && { refresh_token: refresh }),
      ...this.spec.answer,
      ...(this.spec.grantable && scope !== null && { scope }),
    };
  }
}

export interface ServedEmulator {
  /** Base URL to give the plugin's ProviderHttp, including the mount prefix. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves an emulator on 127.0.0.1 on a free port, under `prefix` (default /sandbox/<platform>, the way
 * the server mounts it), so a plugin talks to it over real HTTP.
 */
export function serveEmulator(emulator: Emulator, prefix = `/sandbox/${emulator.platform}`): ServedEmulator {
  type Session = { path: string; session?: { message(data: string): void; close(): void } };
  const server = Bun.serve<Session>({
    hostname: "127.0.0.1",
    port: 0,
    // Timeouts are simulated by holding responses; the server must not cut them first.
    idleTimeout: 0,
    fetch(req, srv) {
      const { pathname } = new URL(req.url);
      if (pathname !== prefix && !pathname.startsWith(prefix + "/")) return new Response("not found", { status: 404 });
      const path = pathname.slice(prefix.length) || "/";
      // WebSocket APIs (Nostr relays) are served by the emulator's openSocket.
      if (emulator.openSocket && req.headers.get("upgrade")?.toLowerCase() === "websocket") {
        return srv.upgrade(req, { data: { path } }) ? undefined : new Response("upgrade failed", { status: 400 });
      }
      return emulator.handle(req, path);
    },
    websocket: {
      open(ws) {
        ws.data.session = emulator.openSocket!(ws.data.path, (data) => ws.send(data));
      },
      message(ws, data) {
        ws.data.session?.message(String(data));
      },
      close(ws) {
        ws.data.session?.close();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}${prefix}`,
    stop: () => server.stop(true),
  };
}

/** The base URL the emulator was reached under (origin plus mount prefix), for links it hands out. */
export function mountBase(req: Request, path: string): string {
  const u = new URL(req.url);
  const pathname = u.pathname.endsWith(path) ? u.pathname.slice(0, u.pathname.length - path.length) : "";
  return `${u.origin}${pathname}`;
}
export { emulatorState } from "./emulator-state.ts";

/**
 * Downloads media the way a platform does when given a URL (Instagram's image_url, TikTok's
 * PULL_FROM_URL): its content type, or null when it could not be fetched (an error answer, a refused
 * connection or address, no answer within 10 s). `pull` is the host's guarded fetch for sandbox
 * emulators (EmulatorOptions.pullMedia); without it, plain fetch.
 */
export async function downloadedType(url: string, pull?: (url: string) => Promise<Response>): Promise<string | null> {
  return (await downloadedFile(url, pull))?.contentType ?? null;
}

/** downloadedType with the bytes' count and first bytes, for emulators that check a file's size or signature. */
export async function downloadedFile(
  url: string,
  pull?: (url: string) => Promise<Response>,
): Promise<{ contentType: string; size: number; head: Uint8Array } | null> {
  try {
    const signal = AbortSignal.timeout(10_000);
    const res = await (pull ? pull(url) : fetch(url, { signal }));
    const bytes = new Uint8Array(await res.arrayBuffer());
    return res.ok
      ? { contentType: res.headers.get("content-type") ?? "", size: bytes.length, head: bytes.subarray(0, 16) }
      : null;
  } catch {
    return null;
  }
}
