import { Elysia, ValidationError, NotFoundError, ParseError } from "elysia";
import { randomUUID } from "node:crypto";
import type { AppContext } from "../context.ts";
import {
  ApiError,
  BadRequest,
  DatabaseStorageFull,
  DatabaseUnavailable,
  InternalError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  UnsupportedMediaType,
} from "./errors.ts";
import { checkJsonShape, findNul, nulError } from "./json-guard.ts";
import { allowedMethods, type RouteLike } from "./methods.ts";
import { bodyAllowance, isCsv } from "./body-allowance.ts";
import { validationToApiError } from "./validation.ts";
import { isConnectionError, isStorageFullError, isTimeoutError, mayHaveApplied } from "../db/availability.ts";

const isJson = (contentType?: string) => /^application\/([\w.-]+\+)?json\b/i.test(contentType ?? "");

const hasBody = (request: Request) => request.headers.get("content-length") !== "0" && request.body !== null;

/**
 * Reads a body as text with a size cap, so a chunked body cannot grow past the limit either. A body of a
 * declared length within the cap is taken whole: the server reads no more than the declared length, and
 * Bun hands over a body it already holds without a stream, whose reader and promises were the largest
 * part of taking a small POST under bench/api. Decoded as the stream's chunks were (a BOM stays).
 */
async function readText(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (declared > limit) throw new PayloadTooLarge(`The request body is larger than ${limit} bytes.`);
  if (Number.isFinite(declared)) {
    const bytes = await request.bytes();
    // A Request made in process can carry more than its header declares.
    if (bytes.byteLength > limit) throw new PayloadTooLarge(`The request body is larger than ${limit} bytes.`);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  }
  const reader = request.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new PayloadTooLarge(`The request body is larger than ${limit} bytes.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads a JSON body with a size cap and the route's cap on values (body-allowance.ts). */
async function readJson(request: Request, limit: number, maxValues?: number): Promise<unknown> {
  const text = await readText(request, limit);
  if (text.trim() === "") return undefined;
  checkJsonShape(text, maxValues);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BadRequest(
      "invalid_json",
      `The request body is not valid JSON: ${(e as Error).message}`,
      "Send a JSON document with Content-Type: application/json.",
    );
  }
  const nul = findNul(value);
  if (nul) throw nulError(nul);
  return value;
}

/** A CSV body as text; NUL is refused as in JSON (PostgreSQL cannot store it). */
async function readCsv(request: Request, limit: number): Promise<string> {
  const text = await readText(request, limit);
  if (text.includes("\0")) throw nulError("body");
  return text;
}

/** The path of a request; never throws, whatever URL the server was handed. */
export function pathOf(request: Request): string {
  try {
    return new URL(request.url).pathname;
  } catch {
    return request.url.split("?")[0] ?? "";
  }
}

function searchOf(request: Request): URLSearchParams {
  try {
    return new URL(request.url).searchParams;
  } catch {
    return new URLSearchParams();
  }
}

const started = new WeakMap<Request, number>();

/**
 * The policy of every response without a page of its own (JSON, errors, media, redirects): even if a
 * browser were made to open one as a document, it gets a unique origin with nothing allowed to run,
 * and its declared type is taken as given. The API docs page (Swagger UI: its bundle and stylesheet
 * from this server, one inline script that starts it) gets a policy of its own here, as the plugin
 * serving it sets none.
 */
export const LOCKED_DOWN_CSP = "default-src 'none'; sandbox";
const DOCS_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'";

export function lockedDownHeaders(path: string): Record<string, string> {
  const csp = path === "/docs" || path === "/docs/" ? DOCS_CSP : LOCKED_DOWN_CSP;
  return { "content-security-policy": csp, "x-content-type-options": "nosniff" };
}

/** What the request log reads of a finished request (principal only on authenticated routes). */
interface Finished {
  request: Request;
  set: { status?: number | string; headers: Record<string, unknown> };
  requestId?: string;
  principal?: { profileId: string };
  responseValue?: unknown;
}

/** Request ids, JSON body parsing, the error envelope and request logs for the whole app. */
export function envelope(ctx: AppContext, routes: () => RouteLike[] = () => []) {
  const log = ctx.log.child({ component: "http" });
  return (
    new Elysia({ name: "envelope" })
      .onRequest(({ request, set }) => {
        started.set(request, performance.now());
        // Filled in only where a response sets none itself: the pages set their own policy.
        Object.assign(set.headers, lockedDownHeaders(pathOf(request)));
        // PostgreSQL cannot store or compare text holding NUL; refuse it in any query parameter up front.
        for (const [name, value] of searchOf(request))
          if (value.includes("\0") || name.includes("\0")) throw nulError(`query.${name}`);
        // While the database is known to be down, /v1 fails at once instead of waiting on reconnects.
        if (ctx.db?.availability?.down && pathOf(request).startsWith("/v1/")) throw new DatabaseUnavailable();
      })
      .derive({ as: "global" }, ({ request, set }) => {
        const requestId = request.headers.get("x-request-id")?.slice(0, 100) || randomUUID();
        set.headers["x-request-id"] = requestId;
        return { requestId };
      })
      .onParse({ as: "global" }, async ({ request, contentType }) => {
        // No route takes JSON by PUT: a PUT body is raw bytes (the media upload) that its route streams itself.
        if (request.method === "PUT") return;
        const declared = Number(request.headers.get("content-length") ?? "NaN");
        if (declared > ctx.config.maxBodyBytes)
          throw new PayloadTooLarge(`The request body is larger than ${ctx.config.maxBodyBytes} bytes.`);
        const allowed = bodyAllowance(pathOf(request));
        if (isJson(contentType)) return readJson(request, ctx.config.maxBodyBytes, allowed.maxJsonValues);
        if (allowed.csv && isCsv(contentType)) return readCsv(request, ctx.config.maxBodyBytes);
        // The API reads JSON only (and CSV where a route allows it); a form body (curl -d) would otherwise
        // surface as odd property errors.
        if (contentType && pathOf(request).startsWith("/v1/") && hasBody(request)) {
          throw new UnsupportedMediaType(contentType.split(";")[0]);
        }
        if (contentType === "" && hasBody(request)) return readJson(request, ctx.config.maxBodyBytes);
      })
      // Hooks name the context fields they read: a spread (...rest) makes elysia assume every field is used
      // and parse the cookies (and more) of every request.
      .onError({ as: "global" }, ({ error, code, set, request, requestId }) => {
        // The database could not be reached: a 503 the client may retry, and the circuit opens (db/availability.ts).
        if (isConnectionError(error)) {
          ctx.db?.availability?.report(error);
          error = new DatabaseUnavailable();
        } else if (!(error instanceof ApiError) && isStorageFullError(error)) {
          // The database's disk is full: writes are refused until space is freed, then work again by themselves.
          error = new DatabaseStorageFull();
        } else if (isTimeoutError(error)) {
          // No answer in time (db/deadline.ts, statement_timeout): a probe tells a hung server from a busy one.
          ctx.db?.availability?.suspect();
          // A read changes nothing, whatever became of its statement.
          const writes = request.method !== "GET" && request.method !== "HEAD";
          error = new DatabaseUnavailable(2, writes && mayHaveApplied(error));
        }
        try {
          return errorResponse(log, error, code, set, request, requestId, routes);
        } catch {
          // Last resort: the envelope without anything from the request, which is what just failed.
          return Response.json(new InternalError(randomUUID()).toBody(), { status: 500 });
        }
      })
      .onAfterResponse({ as: "global" }, ({ request, set, requestId, principal, responseValue }: Finished) => {
        const t0 = started.get(request);
        const status = responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200);
        log.info("request", {
          method: request.method,
          path: pathOf(request),
          status,
          duration_ms: t0 === undefined ? undefined : Math.round((performance.now() - t0) * 100) / 100,
          profile_id: principal?.profileId ?? null,
          request_id: requestId ?? set.headers["x-request-id"],
        });
      })
  );
}

type ErrorSet = { status?: number | string; headers: Record<string, string | number | undefined> };

function errorResponse(
  log: AppContext["log"],
  error: unknown,
  code: unknown,
  set: ErrorSet,
  request: Request,
  derivedId: string | undefined,
  routes: () => RouteLike[],
): Response {
  const requestId = derivedId ?? set.headers["x-request-id"] ?? randomUUID();
  let apiError: ApiError;
  if (error instanceof ApiError) apiError = error;
  else if (error instanceof ValidationError) {
    // A response that fails its own schema is our bug, not the caller's.
    apiError =
      error.type === "response"
        ? internal(log, error, request, String(requestId))
        : validationToApiError(error, request);
  } else if (error instanceof NotFoundError || code === "NOT_FOUND") {
    const path = pathOf(request);
    const allowed = allowedMethods(routes(), path);
    apiError = allowed.length
      ? new MethodNotAllowed(request.method, path, allowed)
      : new NotFound(
          `Route ${request.method} ${path}`,
          "not_found",
          "See /openapi.json for the routes this server answers.",
        );
  } else if ((error as { cause?: unknown } | null)?.cause instanceof ApiError) {
    apiError = (error as { cause: ApiError }).cause;
  } else if (error instanceof ParseError || code === "PARSE") {
    apiError = new BadRequest(
      "invalid_json",
      "The request body could not be parsed.",
      "Send a JSON document with Content-Type: application/json.",
    );
  } else apiError = internal(log, error, request, String(requestId));
  set.status = apiError.status;
  if (apiError.headers) Object.assign(set.headers, apiError.headers);
  return Response.json(apiError.toBody(), {
    status: apiError.status,
    headers: set.headers as Record<string, string>,
  });
}

function internal(log: AppContext["log"], error: unknown, request: Request, requestId: string) {
  const e = error as Error;
  log.error("unhandled error", {
    request_id: requestId,
    method: request.method,
    path: pathOf(request),
    error: e?.message,
    // What the database said, when a query failed (the message itself is only "Failed query: …").
    cause: (e?.cause as Error | undefined)?.message,
    stack: e?.stack,
  });
  return new InternalError(requestId);
}
