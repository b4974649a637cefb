import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { NotFound } from "../../http/errors.ts";
import { Data, errors } from "../../http/model.ts";
import type { ServerIntake } from "../../storage/storage.ts";
import { contentTypeForKey, isMediaKey, MEDIA_CONTENT_TYPES } from "../../storage/keys.ts";
import { UploadReceipt } from "./model.ts";
import { receiveUpload } from "./upload.ts";

type Range = { start: number; end: number } | "unsatisfiable" | null;

/** One `bytes=` range (the only form platforms send); anything else is ignored and the whole file served. */
export function parseRange(header: string | null, size: number): Range {
  const m = header ? /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header) : null;
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Number(m[2]);
  if (end < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end: Math.min(end, size - 1) };
}

const KeyParams = t.Object({ key: t.String({ description: "The media path (data.path of the ticket)." }) });

/**
 * The fs driver's half of the media flow on the server itself: PUT to a signed URL, and public
 * GET/HEAD of stored files with ETag and Range (platforms fetch videos in ranges).
 */
export function mediaFileRoutes(ctx: AppContext, intake: ServerIntake) {
  const serve = async (key: string, request: Request, head: boolean) => {
    const contentType = contentTypeForKey(key);
    const info = contentType ? await ctx.storage.stat(key) : null;
    if (!info || !contentType)
      throw new NotFound("File", "not_found", "Check the URL: use data.public_url from GET /v1/media/{id}.");
    const headers: Record<string, string> = {
      "content-type": contentType,
      etag: info.etag,
      "last-modified": info.lastModified.toUTCString(),
      "accept-ranges": "bytes",
      // A key is never rewritten (one upload per ticket), so caches may keep it.
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    };
    const ifNoneMatch = request.headers.get("if-none-match");
    if (ifNoneMatch && ifNoneMatch.split(",").some((tag) => tag.trim() === info.etag || tag.trim() === "*")) {
      return new Response(null, { status: 304, headers });
    }
    const ifRange = request.headers.get("if-range");
    const range = ifRange && ifRange !== info.etag ? null : parseRange(request.headers.get("range"), info.size);
    if (range === "unsatisfiable") {
      return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${info.size}` } });
    }
    const file = intake.file(key);
    if (range) {
      const length = range.end - range.start + 1;
      return new Response(head ? null : file.slice(range.start, range.end + 1), {
        status: 206,
        headers: {
          ...headers,
          "content-length": String(length),
          "content-range": `bytes ${range.start}-${range.end}/${info.size}`,
        },
      });
    }
    return new Response(head ? null : file, {
      status: 200,
      headers: { ...headers, "content-length": String(info.size) },
    });
  };

  const checkKey = (key: string) => {
    if (!isMediaKey(key))
      throw new NotFound("File", "not_found", "Check the URL: use data.public_url from GET /v1/media/{id}.");
    return key;
  };

  return new Elysia({ name: "media-files", detail: { tags: ["Media"] } })
    .get("/media/:key", ({ params, request }) => serve(checkKey(params.key), request, false), {
      params: KeyParams,
      detail: {
        summary: "Download a stored file (public)",
        description:
          "No authentication: this is data.public_url with the fs driver. Supports HEAD, ETag/If-None-Match and a single `Range: bytes=` range (206, or 416 when out of bounds).",
      },
    })
    .head("/media/:key", ({ params, request }) => serve(checkKey(params.key), request, true), {
      params: KeyParams,
      detail: { summary: "Headers of a stored file (public)" },
    })
    .put(
      "/media/:key",
      async ({ params, query, request }) => ({
        data: await receiveUpload(ctx, intake, checkKey(params.key), query.token, request),
      }),
      {
        // The body is streamed to disk by receiveUpload. A parser that claims the body without reading it
        // stops Elysia's defaults (which would buffer e.g. application/octet-stream); `parse: "none"` cannot
        // be used because the envelope's global parser is also on the route.
        parse: () => null,
        params: KeyParams,
        query: t.Object({ token: t.Optional(t.String()) }),
        response: { 200: Data(UploadReceipt), ...errors(403, 404, 409, 413, 422, 503, 507) },
        detail: {
          summary: "Upload the bytes of a ticket (fs driver)",
          requestBody: {
            required: true,
            description: "The raw file, streamed; its Content-Type must be the ticket's.",
            content: Object.fromEntries(
              MEDIA_CONTENT_TYPES.map((ct) => [ct, { schema: { type: "string", format: "binary" } }]),
            ),
          },
          description:
            "This is data.upload.signedUrl. Send the raw file as the body with the ticket's Content-Type. " +
            "403 invalid_upload_token or upload_expired; 415 content_type_mismatch; 409 upload_already_used (one upload per ticket); " +
            "413 payload_too_large over the type's limit (nothing is kept); 422 media_type_mismatch when the bytes are not the declared type, 422 unreadable_media when sharp (images) or ffprobe (video) cannot read them (nothing is kept either way); " +
            "507 insufficient_storage when the disk under DATA_DIR runs out of room (nothing is kept, the ticket stays open); 503 storage_full when the database's disk is full.",
        },
      },
    );
}
