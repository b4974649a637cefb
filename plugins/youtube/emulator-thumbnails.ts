/**
 * YouTube's thumbnails.set as the emulator answers it: "Uploads a custom video thumbnail to YouTube and
 * sets it for a video" (developers.google.com/youtube/v3/docs/thumbnails/set, checked 2026-11-26):
 * POST /upload/youtube/v3/thumbnails/set?videoId=…, the image as the body; maximum file size 2MB;
 * accepted media types image/jpeg, image/png, application/octet-stream; errors 400 invalidImage ("The
 * provided image content is invalid"), 400 mediaBodyRequired, 403 forbidden (the user has no permission
 * to upload and set custom video thumbnails: channels that may not use custom thumbnails), 404
 * videoNotFound.
 */

/** What the emulator remembers of a video's custom thumbnail. */
export interface CustomThumbnail {
  contentType: string;
  size: number;
}

const MAX_BYTES = 2 * 1024 * 1024;
const ACCEPTED = ["image/jpeg", "image/png", "application/octet-stream"];

const isJpeg = (b: Uint8Array) => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
const isPng = (b: Uint8Array) =>
  b.length > 8 && Buffer.from(b.subarray(0, 8)).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

type Fail = (status: number, reason: string, message: string) => Error;

/**
 * Checks one thumbnails.set request and answers the thumbnail it sets (the caller stores it on the
 * video), or throws the error YouTube answers.
 */
export async function thumbnailOf(
  req: Request,
  url: URL,
  video: { exists: boolean; customThumbnails: boolean },
  fail: Fail,
): Promise<CustomThumbnail> {
  if (!url.searchParams.get("videoId"))
    throw fail(400, "missingRequiredParameter", "No filter selected. Expected one of: videoId");
  if (!video.exists) throw fail(404, "videoNotFound", "The video that you are trying to update cannot be found.");
  if (!video.customThumbnails)
    throw fail(
      403,
      "forbidden",
      "The authenticated user doesn't have permissions to upload and set custom video thumbnails.",
    );
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const bytes = new Uint8Array(await req.arrayBuffer());
  if (!bytes.length) throw fail(400, "mediaBodyRequired", "The request does not include the image content.");
  if (!ACCEPTED.includes(type)) throw fail(400, "invalidImage", `Media type '${type}' is not supported.`);
  // The reference states the limit, not the error; Google's upload front end answers an oversized media body 413.
  if (bytes.length > MAX_BYTES) throw fail(413, "uploadTooLarge", `Media larger than ${MAX_BYTES} bytes.`);
  if (!isJpeg(bytes) && !isPng(bytes)) throw fail(400, "invalidImage", "The provided image content is invalid.");
  return { contentType: isJpeg(bytes) ? "image/jpeg" : "image/png", size: bytes.length };
}
