/**
 * Pieces every emulator needs and no platform owns: the queue of failures tests ask for, holding a
 * response to simulate a timeout after the work was done, and serving an emulator on a loopback port.
 */
import { randomBytes } from "node:crypto";
import type { Emulator, FailureSpec } from "./sdk.ts";

interface PendingFailure extends FailureSpec {
  left: number;
}

/** Failures queued with failNext(), consumed by the calls they match, in the order they were asked for. */
export class FailurePlan {
  private pending: PendingFailure[] = [];

  add(spec: FailureSpec): void {
    this.pending.push({ ...spec, left: Math.max(1, spec.times ?? 1) });
  }

  /**
   * The failure that applies to a call, if any. `names` are what `on` may match: the request path and
   * the platform's method name. A spec without `on` applies to whatever call comes next.
   */
  take(...names: string[]): FailureSpec | undefined {
    const i = this.pending.findIndex((f) => !f.on || names.some((n) => n.includes(f.on!)));
    if (i < 0) return undefined;
    const f = this.pending[i];
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
      if (failure && failure.kind !== "timeout") {
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
      return failure?.kind === "timeout" ? holdThen(res, failure.delayMs) : res;
    },
    failNext: (spec) => r.failures.add(spec),
  };
}

/**
 * Authorization codes of the OAuth code flow as the platforms hand them out: one per consent, bound to
 * its redirect_uri, good once. Codes starting "sandbox_" are taken without a consent page, so a sandbox
 * profile connects without a browser.
 */
export class AuthorizationCodes {
  private codes = new Map<string, { redirect: string; used: boolean }>();

  /**
   * The consent page as a user who says yes meets it: a redirect back with a fresh code and the state.
   * An unknown client or a missing redirect_uri throws the platform's own `refuse()` error.
   */
  authorize(url: URL, clients: { has(id: string): boolean }, refuse: () => Error, clientIdParam = "client_id"): Response {
    const redirect = url.searchParams.get("redirect_uri");
    if (!clients.has(url.searchParams.get(clientIdParam) ?? "") || !redirect) throw refuse();
    const code = randomBytes(12).toString("hex");
    this.codes.set(code, { redirect, used: false });
    const back = new URL(redirect);
    back.searchParams.set("code", code);
    back.searchParams.set("state", url.searchParams.get("state") ?? "");
    return new Response(null, { status: 302, headers: { location: back.toString() } });
  }

  /** Uses up a code: false when it was never issued, was used already, or was issued for another redirect_uri. */
  redeem(code: string, redirect: string | null | undefined): boolean {
    const issued = this.codes.get(code);
    if (!code.startsWith("sandbox_") && (!issued || issued.used || issued.redirect !== redirect)) return false;
    if (issued) issued.used = true;
    return true;
  }

  clear(): void {
    this.codes = new Map();
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
