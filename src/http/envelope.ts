import { Elysia, ValidationError, NotFoundError, ParseError } from "elysia";
import { randomUUID } from "node:crypto";
import type { AppContext } from "../context.ts";
import { ApiError, BadRequest, DatabaseUnavailable, InternalError, NotFound, PayloadTooLarge } from "./errors.ts";
import { isConnectionError } from "../db/availability.ts";

interface SchemaIssue {
  path?: string;
  message?: string;
  summary?: string;
  schema?: { errorCode?: string; errorMessage?: string; errorHint?: string };
}

/**
 * Turns a schema failure into our 400. A schema may carry `errorCode` (and `errorMessage`, `errorHint`)
 * when the spec names the code for that field, e.g. invalid_filename; otherwise it is validation_error.
 */
export function validationToApiError(err: ValidationError, request?: Request): ApiError {
  const issues = (err.all ?? []) as SchemaIssue[];
  let where = err.type;
  if (where === "property") {
    // Elysia checks query parameters one by one and loses the name; find it from the URL.
    where = "query";
    const params = request ? [...new URL(request.url).searchParams] : [];
    const hit = params.find(([, v]) => v === String(err.value) || Number(v) === err.value);
    if (hit && issues[0]) issues[0].path = `/${hit[0]}`;
  }
  const coded = issues.find((i) => i.schema?.errorCode);
  if (coded?.schema?.errorCode) {
    return new BadRequest(
      coded.schema.errorCode,
      coded.schema.errorMessage ?? `${fieldName(where, coded.path)}: ${issueText(coded)}`,
      coded.schema.errorHint,
    );
  }
  const first = issues[0];
  if (!first) return new BadRequest("validation_error", `Invalid ${where}.`);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : "";
  return new BadRequest(
    "validation_error",
    `${fieldName(where, first.path)}: ${issueText(first)}${more}`,
    "Fix the named field and send the request again; /openapi.json describes every field.",
  );
}

function fieldName(where: string, path?: string) {
  const dotted = (path ?? "").replace(/^\//, "").replace(/\//g, ".");
  return dotted ? `${where}.${dotted}` : where;
}

function issueText(issue: SchemaIssue) {
  const text = issue.message ?? issue.summary ?? "is invalid";
  if (/^Expected kind 'Never'|Unexpected property/i.test(text)) return "is not an allowed property";
  return text.replace(/^Property '.*?' should be /, "should be ");
}

/** Reads a JSON body with a size cap, so a chunked body cannot grow past the limit either. */
async function readJson(request: Request, limit: number): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (declared > limit) throw new PayloadTooLarge(`The request body is larger than ${limit} bytes.`);
  const reader = request.body?.getReader();
  if (!reader) return undefined;
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
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BadRequest(
      "invalid_json",
      `The request body is not valid JSON: ${(e as Error).message}`,
      "Send a JSON document with Content-Type: application/json.",
    );
  }
}

const started = new WeakMap<Request, number>();

/** Request ids, JSON body parsing, the error envelope and request logs for the whole app. */
export function envelope(ctx: AppContext) {
  const log = ctx.log.child({ component: "http" });
  return new Elysia({ name: "envelope" })
    .onRequest(({ request }) => {
      started.set(request, performance.now());
      // While the database is known to be down, /v1 fails at once instead of waiting on reconnects.
      if (ctx.db.availability?.down && new URL(request.url).pathname.startsWith("/v1/"))
        throw new DatabaseUnavailable();
    })
    .derive({ as: "global" }, ({ request, set }) => {
      const requestId = request.headers.get("x-request-id")?.slice(0, 100) || randomUUID();
      set.headers["x-request-id"] = requestId;
      return { requestId };
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // No route takes JSON by PUT: a PUT body is raw bytes (the media upload) that its route streams itself.
      if (request.method === "PUT") return;
      if (
        contentType?.startsWith("application/json") ||
        (contentType === "" && request.headers.get("content-length") !== "0" && request.body)
      ) {
        return readJson(request, ctx.config.maxBodyBytes);
      }
    })
    .onError({ as: "global" }, ({ error, code, set, request, ...rest }) => {
      const requestId = (rest as { requestId?: string }).requestId ?? set.headers["x-request-id"] ?? randomUUID();
      let apiError: ApiError;
      if (error instanceof ApiError) apiError = error;
      else if (error instanceof ValidationError) {
        // A response that fails its own schema is our bug, not the caller's.
        apiError =
          error.type === "response"
            ? internal(log, error, request, String(requestId))
            : validationToApiError(error, request);
      } else if (error instanceof NotFoundError || code === "NOT_FOUND") {
        apiError = new NotFound(
          `Route ${request.method} ${new URL(request.url).pathname}`,
          "not_found",
          "See /openapi.json for the routes this server answers.",
        );
      } else if ((error as { cause?: unknown }).cause instanceof ApiError) {
        apiError = (error as { cause: ApiError }).cause;
      } else if (error instanceof ParseError || code === "PARSE") {
        apiError = new BadRequest(
          "invalid_json",
          "The request body could not be parsed.",
          "Send a JSON document with Content-Type: application/json.",
        );
      } else if (isConnectionError(error)) {
        ctx.db.availability?.report(error);
        apiError = new DatabaseUnavailable();
      } else apiError = internal(log, error, request, String(requestId));
      set.status = apiError.status;
      if (apiError.headers) Object.assign(set.headers, apiError.headers);
      return Response.json(apiError.toBody(), {
        status: apiError.status,
        headers: set.headers as Record<string, string>,
      });
    })
    .onAfterResponse({ as: "global" }, ({ request, set, ...rest }) => {
      const t0 = started.get(request);
      const r = rest as { requestId?: string; principal?: { profileId: string }; responseValue?: unknown };
      const status = r.responseValue instanceof Response ? r.responseValue.status : Number(set.status ?? 200);
      log.info("request", {
        method: request.method,
        path: new URL(request.url).pathname,
        status,
        duration_ms: t0 === undefined ? undefined : Math.round((performance.now() - t0) * 100) / 100,
        profile_id: r.principal?.profileId ?? null,
        request_id: r.requestId ?? set.headers["x-request-id"],
      });
    });
}

function internal(log: AppContext["log"], error: unknown, request: Request, requestId: string) {
  const e = error as Error;
  log.error("unhandled error", {
    request_id: requestId,
    method: request.method,
    path: new URL(request.url).pathname,
    error: e?.message,
    stack: e?.stack,
  });
  return new InternalError(requestId);
}
