import { eq } from "drizzle-orm";
import { secretKeys } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import { media } from "../../db/schema.ts";
import { makePosterLater } from "../../media/poster.ts";
import { ApiError, Conflict, Forbidden, NotFound } from "../../http/errors.ts";
import { UploadTooLarge, type ServerIntake } from "../../storage/storage.ts";
import type { MediaContentType } from "../../storage/keys.ts";
import { verifyUploadToken } from "../../storage/upload-token.ts";
import { mediaArrived, UnreadableMedia, type Arrived } from "../../media/arrival.ts";
import { decodeMediaId } from "../../domain/media-ids.ts";
import { storageRefusal, tooLarge, typeMismatch, unreadable } from "./service.ts";
import { matchesType, SNIFF_BYTES } from "./sniff.ts";

const badToken = (message: string) =>
  new Forbidden(
    "invalid_upload_token",
    message,
    "PUT to data.upload.signedUrl exactly as POST /v1/media/uploads returned it.",
  );

const alreadyUsed = () =>
  new Conflict(
    "upload_already_used",
    "This upload ticket has already received its file.",
    "A ticket takes one upload; create a new ticket with POST /v1/media/uploads for another file.",
  );

/**
 * The fs driver's PUT: checks the signed token (key, content type, limit, expiry) and that the ticket is
 * still open, streams the body to a partial file, sniffs it, and renames it into place in the same
 * transaction that marks the ticket uploaded, so two PUTs racing on one ticket cannot both win.
 */
export async function receiveUpload(
  ctx: AppContext,
  intake: ServerIntake,
  key: string,
  token: string | undefined,
  request: Request,
) {
  if (!token) throw badToken("The upload URL has no token.");
  const claims = verifyUploadToken(secretKeys(ctx.config), token);
  if (!claims || claims.key !== key) throw badToken("The upload token is not valid for this URL.");
  if (ctx.clock.now().getTime() >= claims.exp * 1000) {
    throw new Forbidden(
      "upload_expired",
      `This upload URL expired at ${new Date(claims.exp * 1000).toISOString()}.`,
      "Create a new ticket with POST /v1/media/uploads and upload within UPLOAD_TICKET_TTL.",
    );
  }
  const sent = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (sent !== claims.contentType) {
    throw new ApiError(
      415,
      "content_type_mismatch",
      sent
        ? `This upload URL takes Content-Type ${claims.contentType}, not ${sent}.`
        : `This upload URL needs the header Content-Type: ${claims.contentType}.`,
      `Send the header 'Content-Type: ${claims.contentType}' with the PUT.`,
    );
  }
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (declared > claims.maxBytes) throw tooLarge(claims.maxBytes, declared);

  const uuid = decodeMediaId(claims.mediaId);
  const [row] = uuid ? await ctx.db.db.select().from(media).where(eq(media.id, uuid)) : [];
  if (!row) throw new NotFound("Upload ticket", "not_found", "The ticket expired and was removed; create a new one.");
  if (row.status !== "pending") throw alreadyUsed();

  let received;
  try {
    received = await intake.receive(key, request.body, claims.maxBytes, SNIFF_BYTES);
  } catch (e) {
    if (e instanceof UploadTooLarge) throw tooLarge(claims.maxBytes);
    // A full disk leaves the ticket pending: the same signed URL takes the file again once space is freed.
    throw storageRefusal(e);
  }
  const contentType = claims.contentType as MediaContentType;
  const matches = received.size > 0 && matchesType(received.head, contentType);
  // Read before it is renamed into place: a file sharp or ffprobe cannot read is never stored.
  let arrived: Arrived | null = null;
  let refusal: UnreadableMedia | null = null;
  if (matches) {
    try {
      arrived = await mediaArrived(ctx, { key, contentType, localPath: received.partialPath });
    } catch (e) {
      if (!(e instanceof UnreadableMedia)) {
        await intake.discard(received.partialPath);
        throw e;
      }
      refusal = e;
    }
  }
  const status = !matches ? "invalid" : refusal ? "unreadable" : "uploaded";
  if (status !== "uploaded") await intake.discard(received.partialPath);

  let committed = false;
  const outcome = await ctx.db.db
    .transaction(async (tx) => {
      const [current] = await tx.select().from(media).where(eq(media.id, row.id)).for("update");
      if (!current) return "gone" as const;
      if (current.status !== "pending") return "used" as const;
      if (arrived) {
        await intake.commit(received.partialPath, key);
        committed = true;
      }
      await tx
        .update(media)
        .set({
          status,
          sizeBytes: received.size,
          uploadedAt: ctx.clock.now(),
          ...(arrived && { facts: arrived.facts, ...arrived.columns }),
        })
        .where(eq(media.id, row.id));
      return status;
    })
    .catch(async (e) => {
      // The database refused to record it (its disk is full, say): a file it does not know of must not stay.
      if (committed) await ctx.storage.remove(key).catch(() => {});
      else if (arrived) await intake.discard(received.partialPath);
      throw e;
    });
  if (outcome === "gone" || outcome === "used") {
    await intake.discard(received.partialPath);
    if (outcome === "used") throw alreadyUsed();
    throw new NotFound(
      "Upload ticket",
      "not_found",
      "The ticket expired and was removed while uploading; create a new one.",
    );
  }
  if (outcome === "invalid") throw typeMismatch(row);
  if (outcome === "unreadable") throw unreadable(row, refusal?.message);
  // A video's poster frame is made in the background: the upload's answer does not wait for ffmpeg.
  void makePosterLater(ctx, {
    ...row,
    status: "uploaded",
    sizeBytes: received.size,
    ...(arrived && { facts: arrived.facts, ...arrived.columns }),
  });
  return { id: claims.mediaId, path: key, size: received.size };
}
