import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Config } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import { media } from "../../db/schema.ts";
import { makePosterLater } from "../../media/poster.ts";
import {
  BadRequest,
  Conflict,
  InsufficientStorage,
  NotFound,
  PayloadTooLarge,
  StorageUnavailable,
  Unprocessable,
} from "../../http/errors.ts";
import {
  contentTypeForExtension,
  fitsShorthand,
  MEDIA_KIND_SHORTHANDS,
  MEDIA_TYPES,
  type MediaContentType,
  type MediaKindShorthand,
} from "../../storage/keys.ts";
import { StoreFull, StoreUnavailable, type StoreIntake } from "../../storage/storage.ts";
import { decodeMediaId, encodeMediaId, mediaKey } from "../../domain/media-ids.ts";
import type { Media, UploadCreate, UploadTicket } from "./model.ts";
import { mediaArrived, UnreadableMedia, type Arrived } from "../../media/arrival.ts";
import { matchesType, SNIFF_BYTES } from "./sniff.ts";

export type MediaRow = typeof media.$inferSelect;

/**
 * A store's refusal to write, as the client sees it: no room is 507 insufficient_storage (free space, then
 * upload again), a store that did not answer is 503 storage_unavailable (send again). Anything else is unchanged.
 */
export function storageRefusal(e: unknown): unknown {
  if (e instanceof StoreFull) return new InsufficientStorage(e.message);
  if (e instanceof StoreUnavailable) return new StorageUnavailable();
  return e;
}

/** The byte limit of one upload of this content type (MAX_IMAGE_BYTES, MAX_GIF_BYTES, MAX_VIDEO_BYTES). */
export function limitFor(config: Config, contentType: MediaContentType): number {
  const kind = MEDIA_TYPES[contentType].kind;
  return kind === "gif" ? config.maxGifBytes : kind === "video" ? config.maxVideoBytes : config.maxImageBytes;
}

function invalidFilename(message: string) {
  return new BadRequest("invalid_filename", message, "Send the original file name with its extension, like photo.jpg.");
}

/** The file's extension, lower-cased, after checking the name is a bare file name whose extension fits the type. */
export function checkFilename(filename: string, contentType: MediaContentType): string {
  const name = filename.trim();
  if (!name) throw invalidFilename("filename is required");
  if (name.length > 255) throw invalidFilename("filename must be at most 255 characters");
  if (/[/\\]/.test(name))
    throw invalidFilename("filename must be a bare file name, without folders or path separators");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalidFilename("filename must not contain control characters");
  const dot = name.lastIndexOf(".");
  if (dot <= 0 || dot === name.length - 1) throw invalidFilename("filename must have an extension, like photo.jpg");
  const ext = name.slice(dot + 1).toLowerCase();
  const allowed = MEDIA_TYPES[contentType].extensions as readonly string[];
  if (!allowed.includes(ext)) {
    const actual = contentTypeForExtension(ext);
    throw invalidFilename(
      `filename extension .${ext} does not match content_type ${contentType}` +
        (actual ? ` (.${ext} is ${actual})` : "") +
        `; expected ${allowed.map((e) => "." + e).join(", ")}`,
    );
  }
  return ext;
}

/**
 * The MIME type a ticket is for: the one sent, or for the shorthand `image`/`video` the type of the file
 * name's extension, which must be of that kind.
 */
export function resolveContentType(filename: string, sent: string): MediaContentType {
  if (!(MEDIA_KIND_SHORTHANDS as readonly string[]).includes(sent)) return sent as MediaContentType;
  const shorthand = sent as MediaKindShorthand;
  const name = filename.trim();
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : "";
  const type = ext ? contentTypeForExtension(ext) : null;
  if (type && fitsShorthand(type, shorthand)) return type;
  const accepted = extensionsOf(shorthand);
  throw new BadRequest(
    "invalid_content_type",
    ext
      ? `content_type ${shorthand} does not fit filename ${JSON.stringify(name)}: .${ext} is ${type ?? "not a supported type"}`
      : `content_type ${shorthand} needs a filename with an extension to tell the type; ${JSON.stringify(name)} has none`,
    `With content_type ${shorthand}, name the file with one of ${accepted.join(", ")}, or send its MIME type instead.`,
  );
}

const extensionsOf = (shorthand: MediaKindShorthand) =>
  (Object.keys(MEDIA_TYPES) as MediaContentType[])
    .filter((ct) => fitsShorthand(ct, shorthand))
    .flatMap((ct) => MEDIA_TYPES[ct].extensions.map((e) => `.${e}`));

export async function createTicket(ctx: AppContext, profileId: string, body: UploadCreate): Promise<UploadTicket> {
  const contentType = resolveContentType(body.filename, body.content_type);
  const ext = checkFilename(body.filename, contentType);
  const uuid = randomUUID();
  const mediaId = encodeMediaId(uuid);
  const key = mediaKey(mediaId, ext);
  const maxBytes = limitFor(ctx.config, contentType);
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + ctx.config.uploadTicketTtlSeconds * 1000);
  await ctx.db.db.insert(media).values({
    id: uuid,
    profileId,
    filename: body.filename.trim(),
    contentType,
    path: key,
    status: "pending",
    maxBytes,
    expiresAt,
    createdAt: now,
  });
  const grant = await ctx.storage.signUpload({ mediaId, key, contentType, maxBytes, expiresAt });
  return {
    content_type: contentType,
    media_id: mediaId,
    path: key,
    upload: { path: grant.path, token: grant.token, signedUrl: grant.signedUrl },
    expires_at: expiresAt.toISOString(),
    max_bytes: maxBytes,
  };
}

const notUploaded = (row: MediaRow, now: Date) =>
  row.expiresAt < now
    ? new Conflict(
        "media_not_uploaded",
        "No bytes were uploaded for this media and its upload ticket has expired.",
        "Create a new ticket with POST /v1/media/uploads and PUT the file to its signedUrl.",
      )
    : new Conflict(
        "media_not_uploaded",
        "No bytes have been uploaded for this media yet.",
        `PUT the raw file to the ticket's upload.signedUrl (with its Content-Type) before ${row.expiresAt.toISOString()}, then ask again.`,
      );

export const typeMismatch = (row: Pick<MediaRow, "contentType">) =>
  new Unprocessable(
    "media_type_mismatch",
    `The uploaded bytes are not ${row.contentType}; the media is unusable and its bytes were discarded.`,
    "Create a new ticket whose content_type matches the file and upload it again.",
  );

export function tooLarge(maxBytes: number, size?: number) {
  return new PayloadTooLarge(
    size === undefined
      ? `The file is larger than this upload's limit of ${maxBytes} bytes.`
      : `The file is ${size} bytes, over this upload's limit of ${maxBytes} bytes; it was not kept.`,
    "Upload a smaller file; the limits per type are MAX_IMAGE_BYTES, MAX_GIF_BYTES and MAX_VIDEO_BYTES.",
  );
}

export const unreadable = (row: Pick<MediaRow, "contentType">, reason?: string) =>
  new Unprocessable(
    "unreadable_media",
    `The uploaded file could not be read as ${row.contentType}${reason ? ` (${reason})` : ""}; the media is unusable and its bytes were discarded.`,
    "Check that the file opens in an image viewer or video player (not cut short or damaged), then create a new ticket and upload it again.",
  );

/** A settled row, with the reason sharp or ffprobe gave when it turned the file down just now. */
export type SettledRow = MediaRow & { unreadableReason?: string };

/**
 * S3 uploads go straight to the store's upload area, so a pending ticket is settled when someone looks:
 * the upload's size is checked against the limit (too large: deleted, the ticket stays open, 413) and its
 * first bytes against the type (mismatch: deleted, the media invalid); a good upload is copied to the key
 * Crier serves and read there (src/media/arrival.ts; unreadable: deleted, the media unreadable). Used by
 * GET /v1/media/{id} and by cleanup.
 */
export async function settleStoredUpload(ctx: AppContext, incoming: StoreIntake, row: MediaRow): Promise<SettledRow> {
  const storage = ctx.storage;
  const contentType = row.contentType as MediaContentType;
  const info = await incoming.stat(row.path);
  let outcome: { status: "uploaded" | "invalid"; size: number };
  if (!info) {
    // A copy that finished before the database heard of it (a crash in between) leaves the served object.
    const served = await storage.stat(row.path);
    if (!served) return row;
    outcome = { status: "uploaded", size: served.size };
  } else {
    if (info.size > row.maxBytes) {
      await incoming.remove(row.path);
      throw tooLarge(row.maxBytes, info.size);
    }
    const head = await incoming.readStart(row.path, SNIFF_BYTES, info.etag);
    // Replaced between the look and the read: the next look settles the new bytes.
    if (info.size > 0 && head.length === 0) return row;
    if (info.size > 0 && matchesType(head, contentType)) {
      // A store that cannot take the copy leaves the ticket pending: the next look tries again.
      const promoted = await incoming.promote(row.path, info.etag).catch((e) => {
        throw storageRefusal(e);
      });
      if (!promoted) return row;
      outcome = { status: "uploaded", size: info.size };
    } else {
      await incoming.remove(row.path);
      outcome = { status: "invalid", size: info.size };
    }
  }
  let arrived: Arrived | null = null;
  let refusal: UnreadableMedia | null = null;
  if (outcome.status === "uploaded") {
    // Any other failure (the store not answering) leaves the ticket pending with the served copy in
    // place: the next look reads it again.
    try {
      arrived = await mediaArrived(ctx, { key: row.path, contentType });
    } catch (e) {
      if (!(e instanceof UnreadableMedia)) throw e;
      refusal = e;
      await storage.remove(row.path);
    }
  }
  const [updated] = await ctx.db.db
    .update(media)
    .set({
      status: refusal ? "unreadable" : outcome.status,
      sizeBytes: outcome.size,
      uploadedAt: ctx.clock.now(),
      ...(arrived && { facts: arrived.facts, ...arrived.columns }),
    })
    .where(and(eq(media.id, row.id), eq(media.status, "pending")))
    .returning();
  if (updated) {
    // This look settled the upload: its video's poster frame is made in the background.
    if (updated.status === "uploaded") void makePosterLater(ctx, updated);
    return refusal ? { ...updated, unreadableReason: refusal.message } : updated;
  }
  // Someone else settled it first: their answer stands.
  const [current] = await ctx.db.db.select().from(media).where(eq(media.id, row.id));
  return current ?? row;
}

export async function toMedia(ctx: AppContext, row: MediaRow): Promise<Media> {
  return {
    id: encodeMediaId(row.id),
    path: row.path,
    filename: row.filename,
    uploaded_at: row.uploadedAt ? row.uploadedAt.toISOString() : null,
    public_url: await ctx.storage.publicUrl(row.path),
    content_type: row.contentType,
    size: row.sizeBytes ?? 0,
    width: row.width,
    height: row.height,
    duration: row.durationSeconds,
    facts: row.facts ?? null,
    poster_url: row.posterPath ? await ctx.storage.publicUrl(row.posterPath) : null,
  };
}

export async function getMedia(ctx: AppContext, profileId: string, id: string): Promise<Media> {
  const uuid = decodeMediaId(id);
  if (!uuid) {
    throw new BadRequest(
      "invalid_media_id",
      `'${id.slice(0, 80)}' is not a media id.`,
      "Use data.media_id from POST /v1/media/uploads (it starts with med_).",
    );
  }
  let [row]: SettledRow[] = await ctx.db.db
    .select()
    .from(media)
    .where(and(eq(media.id, uuid), eq(media.profileId, profileId)));
  if (!row) throw new NotFound("Media");
  const intake = ctx.storage.intake;
  if (row.status === "pending" && intake.kind === "store") row = await settleStoredUpload(ctx, intake, row);
  if (row.status === "invalid") throw typeMismatch(row);
  if (row.status === "unreadable") throw unreadable(row, row.unreadableReason);
  if (row.status === "pending") throw notUploaded(row, ctx.clock.now());
  // The bytes must really be there before we hand out a URL to them.
  if (!(await ctx.storage.stat(row.path))) {
    throw new Conflict(
      "media_not_uploaded",
      "The stored file of this media is missing.",
      "Upload the file again with a new ticket (POST /v1/media/uploads).",
    );
  }
  return toMedia(ctx, row);
}
