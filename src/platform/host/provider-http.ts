/**
 * The provider HTTP client every plugin uses. It knows nothing of any platform: base URL, timeouts and
 * the classification of failures into Outcome kinds live here so that every plugin gets them right.
 */
import type { Logger } from "../../log.ts";
import { classifyStatus, type ResponseClassifier } from "../http.ts";
import {
  MediaError,
  type FailureOutcome,
  type ProviderHttp,
  type ProviderResponse,
  type ProviderResult,
  type RequestOptions,
} from "../sdk.ts";

export interface ProviderHttpOptions {
  baseUrl: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  log: Logger;
  /** Headers sent on every call (a User-Agent, an API version header); per-call headers win. */
  headers?: Record<string, string>;
  classify?: ResponseClassifier;
  /** Clock for turning a Retry-After HTTP date into a delay. */
  now?: () => Date;
  /** Handed to plugins of WebSocket APIs as ProviderHttp.webSocket (sandbox: in-process emulator). */
  webSocket?: typeof WebSocket;
}

// Bun and Node report a refused or unresolvable connection with these codes: nothing was sent.
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EAI_AGAIN",
  "FailedToOpenSocket",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

function errorCode(e: unknown): string | undefined {
  const err = e as { code?: unknown; cause?: { code?: unknown } };
  if (typeof err?.code === "string") return err.code;
  if (typeof err?.cause?.code === "string") return err.cause.code;
  return undefined;
}

/** Bot tokens travel in Telegram's paths; keep them out of logs. */
function redactPath(path: string): string {
  return path.replace(/\/bot[^/]+/, "/bot***").replace(/\?.*$/, "");
}

function buildUrl(baseUrl: string, path: string, query?: RequestOptions["query"]): URL {
  const url = /^https?:\/\//i.test(path)
    ? new URL(path)
    : new URL(baseUrl.replace(/\/+$/, "") + (path.startsWith("/") ? path : `/${path}`));
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined) url.searchParams.append(k, String(v));
  }
  return url;
}

function buildBody(opts: RequestOptions, headers: Headers): BodyInit | undefined {
  if (opts.json !== undefined) {
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
    return JSON.stringify(opts.json);
  }
  if (opts.form) {
    if (!headers.has("content-type")) headers.set("content-type", "application/x-www-form-urlencoded");
    return new URLSearchParams(opts.form).toString();
  }
  // fetch writes the multipart boundary itself; a content-type set here would lose it.
  if (opts.multipart) return opts.multipart;
  return opts.body;
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json") || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

class TimeoutSignal extends Error {}

/**
 * Whatever a platform's classifier reads into it ("transient, retry"), a 5xx to a creating call that is
 * not idempotent does not prove the post was not made: held here so no plugin can retry into a duplicate.
 */
function creatingCallRule(res: ProviderResponse, outcome: FailureOutcome): FailureOutcome {
  if (!res.creates || res.idempotent || res.status < 500 || outcome.kind !== "retryable") return outcome;
  return {
    kind: "unknown",
    reason: `platform error ${res.status} after the creating call was sent: ${outcome.reason}`,
  };
}

export function createProviderHttp(options: ProviderHttpOptions): ProviderHttp {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? (() => new Date());
  const log = options.log;
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    timeoutMs: options.timeoutMs,
    ...(options.webSocket && { webSocket: options.webSocket }),
    async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ProviderResult<T>> {
      const url = buildUrl(options.baseUrl, path, opts.query);
      const headers = new Headers({ accept: "application/json", ...options.headers, ...opts.headers });
      const body = buildBody(opts, headers);
      const timeoutMs = opts.timeoutMs ?? options.timeoutMs;
      const controller = new AbortController();
      // The timer covers reading the body too: a platform that sends headers and then stalls is a timeout.
      const timer = setTimeout(
        () => controller.abort(new TimeoutSignal(`no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const creates = opts.creates === true;
      const started = performance.now();
      const logged = { method, path: redactPath(url.pathname), host: url.host };
      try {
        const res = await doFetch(url, { method, headers, body, signal: controller.signal, redirect: "manual" });
        const parsed = await readBody(res);
        log.debug("provider call", { ...logged, status: res.status, ms: Math.round(performance.now() - started) });
        if (res.status >= 200 && res.status < 300)
          return { ok: true, status: res.status, body: parsed as T, headers: res.headers };
        const response: ProviderResponse = {
          status: res.status,
          body: parsed,
          headers: res.headers,
          creates,
          idempotent: opts.idempotent === true,
        };
        const outcome = creatingCallRule(response, options.classify?.(response) ?? classifyStatus(response, now()));
        return { ok: false, outcome, status: res.status, body: parsed };
      } catch (e) {
        // A media body that fails while being streamed up (too large, source stalled): nothing was created.
        const media =
          e instanceof MediaError
            ? e
            : (e as { cause?: unknown })?.cause instanceof MediaError
              ? (e as { cause: MediaError }).cause
              : null;
        if (media)
          return {
            ok: false,
            outcome: media.retryable
              ? { kind: "retryable", reason: media.message }
              : { kind: "permanent", reason: media.message, code: "media_refused" },
          };
        const timedOut = controller.signal.aborted && controller.signal.reason instanceof TimeoutSignal;
        const code = errorCode(e);
        log.debug("provider call failed", { ...logged, error: (e as Error)?.message, code, timed_out: timedOut });
        if (timedOut) {
          const reason = `${method} ${logged.path}: no answer within ${timeoutMs} ms`;
          return { ok: false, outcome: creates ? { kind: "unknown", reason } : { kind: "retryable", reason } };
        }
        const reason = `${method} ${logged.path}: ${(e as Error)?.message ?? String(e)}`;
        if (code && NOT_SENT.has(code))
          return { ok: false, outcome: { kind: "retryable", reason: `connection failed: ${reason}` } };
        // The connection broke after the request may have reached the platform.
        return {
          ok: false,
          outcome: creates
            ? { kind: "unknown", reason: `connection lost: ${reason}` }
            : { kind: "retryable", reason: `connection lost: ${reason}` },
        };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
