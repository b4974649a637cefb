import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, errors, Paged } from "../../http/model.ts";
import { mediaFileRoutes } from "./files.ts";
import { Media, MediaListQuery, UploadBase64, UploadCreate, UploadFromUrl, UploadTicket } from "./model.ts";
import { uploadBase64, uploadFromUrl } from "./ingest.ts";
import { listMedia } from "./list.ts";
import * as service from "./service.ts";

export function mediaRoutes(ctx: AppContext) {
  const api = new Elysia({ name: "media", prefix: "/v1/media", detail: { tags: ["Media"] } })
    .use(auth(ctx))
    .get("", ({ principal, query }) => listMedia(ctx, principal.profileId, query), {
      scope: "media:read",
      query: MediaListQuery,
      response: { 200: Paged(Media), ...errors(400) },
      detail: {
        summary: "List uploaded media",
        description:
          "Extension: the profile's uploads, newest first (uploaded_at, then id, descending), each as GET /v1/media/{id} answers it: " +
          "its facts, and poster_url for a video whose poster frame is made. Only files whose bytes arrived and were read are listed " +
          "(no pending tickets, no refused or unreadable files). type=image or type=video narrows the list (image includes GIFs). " +
          "Page with meta.next_after and meta.next_after_id. A listed file's public_url can be used again as media[].url of any post or draft.",
      },
    })
    .post(
      "/uploads",
      async ({ principal, body, set }) => {
        set.status = 201;
        return { data: await service.createTicket(ctx, principal.profileId, body) };
      },
      {
        scope: "media:write",
        body: UploadCreate,
        response: { 201: Data(UploadTicket), ...errors(400) },
        detail: {
          summary: "Create an upload ticket",
          description:
            "Creates no bytes. Then: PUT the raw file to data.upload.signedUrl with the same Content-Type before expires_at; " +
            "GET /v1/media/{media_id}; pass its public_url as media[].url. 400 invalid_filename (missing, with folders, no extension, " +
            "or an extension that does not fit content_type), 400 invalid_content_type. content_type may also be the shorthand image or video (as the upstream service accepts): " +
            "the type then comes from the file name's extension and the ticket answers the full MIME type; an extension of another kind, or none, is 400 invalid_content_type naming both. Limits: MAX_IMAGE_BYTES, MAX_GIF_BYTES, MAX_VIDEO_BYTES.",
        },
      },
    )
    .post(
      "/from-url",
      async ({ principal, body, set }) => {
        set.status = 201;
        return { data: await uploadFromUrl(ctx, principal.profileId, body) };
      },
      {
        scope: "media:write",
        body: UploadFromUrl,
        response: { 201: Data(Media), ...errors(400, 413, 422, 503, 507) },
        detail: {
          summary: "Upload a file from a URL",
          description:
            "Extension for clients that cannot PUT bytes (AI agents): the server fetches the file through the media guard and stores it as an upload, then answers the media as GET /v1/media/{id} does. " +
            "The type is the Content-Type the URL answers (else the file name's extension). 422 media_fetch_failed when the URL cannot be fetched or is refused by the guard; 400 invalid_content_type; 413 over the type's limit; 422 media_type_mismatch when the bytes are not the type; 422 unreadable_media when sharp or ffprobe cannot read the file; 507 insufficient_storage when the media store has no room (503 storage_unavailable when it does not answer); nothing is stored then.",
        },
      },
    )
    .post(
      "/base64",
      async ({ principal, body, set }) => {
        set.status = 201;
        return { data: await uploadBase64(ctx, principal.profileId, body) };
      },
      {
        scope: "media:write",
        body: UploadBase64,
        response: { 201: Data(Media), ...errors(400, 413, 422, 503, 507) },
        detail: {
          summary: "Upload a small file inline (base64)",
          description:
            "Extension for clients that cannot PUT bytes: stores the decoded file as an upload and answers the media. 400 invalid_base64, invalid_filename; 413 over 5 MiB decoded or MAX_BODY_BYTES; 422 media_type_mismatch; 422 unreadable_media when sharp or ffprobe cannot read the file; 507 insufficient_storage when the media store has no room (503 storage_unavailable when it does not answer); nothing is stored then.",
        },
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => ({ data: await service.getMedia(ctx, principal.profileId, params.id) }),
      {
        scope: "media:read",
        params: t.Object({ id: t.String({ description: "data.media_id of the ticket (med_…)." }) }),
        response: { 200: Data(Media), ...errors(400, 404, 409, 413, 422, 503, 507) },
        detail: {
          summary: "Resolve an uploaded media",
          description:
            "400 invalid_media_id; 404 not_found (unknown or another profile's); 409 media_not_uploaded while no bytes arrived; " +
            "422 media_type_mismatch when the bytes were not the declared type, 422 unreadable_media when sharp or ffprobe could not read them (the bytes are discarded either way); " +
            "data.facts is what was read from the file. With S3, 413 when the stored object is over the limit " +
            "(it is deleted and the ticket stays open), 507 insufficient_storage when the store refuses to copy it into place for lack of room (503 storage_unavailable when it does not answer; the ticket stays pending and the next look tries again). With S3 and no S3_PUBLIC_URL, public_url is a presigned GET valid for 7 days.",
        },
      },
    );
  const app = new Elysia({ name: "media-module" }).use(api);
  const intake = ctx.storage.intake;
  return intake.kind === "server" ? app.use(mediaFileRoutes(ctx, intake)) : app;
}
