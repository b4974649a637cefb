/**
 * Uploads for clients that cannot PUT bytes (AI agents): a file fetched server-side from a public URL, or
 * sent inline as base64. Both go through an ordinary upload ticket, so the bytes are checked, sniffed and
 * stored exactly like a PUT to signedUrl.
 */
import type { AppContext } from "../../context.ts";
import { ApiError, BadRequest, PayloadTooLarge } from "../../http/errors.ts";
import { createMediaAccess } from "../../platform/host/media-guard.ts";
import { MediaError } from "../../platform/sdk.ts";
import {
  contentTypeForExtension,
  MEDIA_CONTENT_TYPES,
  MEDIA_TYPES,
  type MediaContentType,
} from "../../storage/keys.ts";
import type { Media, UploadBase64, UploadFromUrl } from "./model.ts";
import { createTicket, getMedia, storageRefusal } from "./service.ts";
import { storeWriteRefusal } from "../../storage/storage.ts";
import { receiveUpload } from "./upload.ts";

/** Decoded bytes an inline upload may carry: JSON-RPC messages are held in memory whole. */
export const BASE64_MAX_BYTES = 5 * 1024 * 1024;

/** Stores bytes through a new ticket and answers the media, as GET /v1/media/{id} would. */
async function store(
  ctx: AppContext,
  profileId: string,
  filename: string,
  contentType: MediaContentType,
  bytes: Uint8Array<ArrayBuffer>,
) {
  const ticket = await createTicket(ctx, profileId, { filename, content_type: contentType });
  const put = new Request("http://localhost/", {
    method: "PUT",
    headers: { "content-type": contentType, "content-length": String(bytes.byteLength) },
    body: bytes,
  });
  const intake = ctx.storage.intake;
  if (intake.kind === "server") await receiveUpload(ctx, intake, ticket.path, ticket.upload.token, put);
  else {
    // S3: the presigned PUT is the only way in; the store checks it like any client's upload.
    const res = await fetch(ticket.upload.signedUrl, { method: "PUT", headers: put.headers, body: bytes }).catch(
      () => null,
    );
    if (!res?.ok) {
      const code = res ? /<Code>([^<]+)<\/Code>/.exec(await res.text().catch(() => ""))?.[1] : undefined;
      const refusal = storeWriteRefusal(res?.status, code);
      throw refusal ? storageRefusal(refusal) : new Error(`storing the upload answered HTTP ${res?.status}`);
    }
  }
  return getMedia(ctx, profileId, ticket.media_id);
}

const fileExtension = (name: string) => {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
};

/** A name that carries the type's extension: the one given or found in the URL when it fits, else media.<ext>. */
function nameFor(candidate: string, contentType: MediaContentType) {
  const fits = (MEDIA_TYPES[contentType].extensions as readonly string[]).includes(fileExtension(candidate));
  return fits && !/[/\\]/.test(candidate) ? candidate : `media.${MEDIA_TYPES[contentType].extensions[0]}`;
}

export async function uploadFromUrl(ctx: AppContext, profileId: string, body: UploadFromUrl): Promise<Media> {
  let url: URL;
  try {
    url = new URL(body.url.trim());
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
  } catch {
    throw new BadRequest(
      "invalid_media",
      "url is not an absolute http or https URL.",
      "Give the file's public http(s) URL.",
    );
  }
  const { maxImageBytes, maxGifBytes, maxVideoBytes } = ctx.config;
  const guard = createMediaAccess({
    maxBytes: Math.max(maxImageBytes, maxGifBytes, maxVideoBytes),
    timeoutMs: 120_000,
    allowAddress: ctx.mediaFetchAllow,
    log: ctx.log.child({ component: "media-fetch" }),
  });
  const urlName = decodeURIComponent(url.pathname.split("/").pop() ?? "");
  let fetched: { contentType: string; bytes: Uint8Array<ArrayBuffer> };
  try {
    const opened = await guard.open({ url: url.href, type: "image" });
    fetched = { contentType: opened.contentType.toLowerCase(), bytes: new Uint8Array(await opened.bytes()) };
  } catch (e) {
    if (!(e instanceof MediaError)) throw e;
    throw new ApiError(
      422,
      "media_fetch_failed",
      `The file could not be fetched: ${e.message}.`,
      "Give a public URL that answers the file itself.",
    );
  }
  const contentType = (MEDIA_CONTENT_TYPES as string[]).includes(fetched.contentType)
    ? (fetched.contentType as MediaContentType)
    : contentTypeForExtension(fileExtension(body.filename ?? urlName));
  if (!contentType)
    throw new BadRequest(
      "invalid_content_type",
      `The URL answered ${fetched.contentType || "no Content-Type"}, not one of ${MEDIA_CONTENT_TYPES.join(", ")}.`,
      "Give the URL of an image or video file of a supported type.",
    );
  return store(ctx, profileId, nameFor(body.filename ?? urlName, contentType), contentType, fetched.bytes);
}

export async function uploadBase64(ctx: AppContext, profileId: string, body: UploadBase64): Promise<Media> {
  const data = body.data.replace(/^data:[^,]*;base64,/, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data) || data.length === 0)
    throw new BadRequest(
      "invalid_base64",
      "data is not base64.",
      "Send the file's bytes base64-encoded (no data: prefix needed).",
    );
  const bytes = new Uint8Array(Buffer.from(data, "base64"));
  if (bytes.byteLength > BASE64_MAX_BYTES)
    throw new PayloadTooLarge(
      `The decoded file is ${bytes.byteLength} bytes; inline uploads take at most ${BASE64_MAX_BYTES}.`,
      "Use upload_media_from_url, or create_upload_url and PUT the bytes.",
    );
  return store(ctx, profileId, body.filename, body.content_type as MediaContentType, bytes);
}
