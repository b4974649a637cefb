/**
 * Listening with Bun.serve: the only place a raw request from the network meets the app. What happens
 * here happens before Elysia runs, so it must not be able to throw and must answer in the envelope.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { maxUploadBytes } from "../storage/index.ts";
import { recordClientAddress, TrustedProxies } from "./client-address.ts";
import { lockedDownHeaders } from "./envelope.ts";
import { ApiError, BadRequest, InternalError, PayloadTooLarge } from "./errors.ts";
import { withQueryDeadline } from "../db/deadline.ts";

interface Handler {
  handle(request: Request): Response | Promise<Response>;
}

export interface ServeOptions {
  hostname: string;
  port: number;
  config: Config;
  log: Logger;
}

/**
 * Bun.serve in production mode whatever NODE_ENV says: development mode answers an uncaught error with
 * an HTML page of stack frames, absolute paths and source lines.
 */
export function serveApp(app: Handler, opts: ServeOptions) {
  const uploadLimit = maxUploadBytes(opts.config);
  const bodyLimit = opts.config.maxBodyBytes;
  const proxies = new TrustedProxies(opts.config.trustedProxies ?? []);
  const fallback = (error: unknown) => {
    const requestId = crypto.randomUUID();
    opts.log.error("unhandled error before routing", { request_id: requestId, error: (error as Error)?.message });
    return envelopeResponse(new InternalError(requestId));
  };
  return Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    development: false,
    idleTimeout: 120,
    // Bun would refuse a larger declared body itself, with an empty 413; limits are enforced below instead,
    // in the envelope, per kind of request.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    async fetch(request, server) {
      try {
        const ready = admit(request, request.method === "PUT" ? uploadLimit : bodyLimit);
        if (ready instanceof Response) return ready;
        const peer = server.requestIP(request)?.address;
        recordClientAddress(ready, peer && proxies.client(peer, request.headers.get("x-forwarded-for")));
        // Each statement the request sends is bounded, so it answers 503 in time whatever the database does.
        return await withQueryDeadline(opts.config.databaseRequestTimeoutMs ?? null, () => app.handle(ready));
      } catch (e) {
        return fallback(e);
      }
    },
    error: fallback,
  });
}

/**
 * The request as the app should see it, or the answer that refuses it: an absolute URL (HTTP/1.0
 * clients may send no Host header, and Bun then gives a bare path), a declared body within `limit`,
 * and a chunked body cut off with 413 once it passes `limit`.
 */
function admit(request: Request, limit: number): Request | Response {
  const declared = request.headers.get("content-length");
  if (declared !== null && !/^\d+$/.test(declared))
    return envelopeResponse(
      new BadRequest("invalid_request", "Content-Length is not a number.", "Send a valid Content-Length."),
    );
  if (declared !== null && Number(declared) > limit)
    return envelopeResponse(new PayloadTooLarge(`The request body is larger than ${limit} bytes.`));
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(request.url);
  const chunked = declared === null && request.body !== null;
  if (absolute && !chunked) return request;
  // Bun gives a bare path only when no Host header came.
  const url = absolute ? request.url : `http://localhost${safePath(request.url)}`;
  return new Request(url, {
    method: request.method,
    headers: request.headers,
    body: chunked ? capped(request.body!, limit) : request.body,
    signal: request.signal,
    // A streamed body needs this; harmless for the rest.
    duplex: "half",
  } as RequestInit);
}

/** A relative request target as a path, or "/" when it is not one (e.g. an absolute-form or `*` target). */
function safePath(target: string): string {
  return target.startsWith("/") ? target : "/";
}

/** The stream, failing with 413 once more than `limit` bytes have passed. */
function capped(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(new PayloadTooLarge(`The request body is larger than ${limit} bytes.`));
        else controller.enqueue(chunk);
      },
    }),
  );
}

function envelopeResponse(e: ApiError): Response {
  return Response.json(e.toBody(), { status: e.status, headers: { ...lockedDownHeaders(""), ...e.headers } });
}
