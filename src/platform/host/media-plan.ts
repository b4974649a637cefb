/**
 * What one media item needs before it can leave for one platform: nothing (as_is), a converted copy
 * (convert, with the output it must have), or nothing Crier can do (refuse, with the platform's numbers).
 * Pure: the checks at post creation and the engine before publishing both decide with it, so a post that
 * was accepted is converted exactly as its check promised.
 *
 * Only Crier's own media (uploaded through /v1/media) can be converted: an external URL is sent as it is
 * or refused at creation.
 */
import { createHash } from "node:crypto";
import type { MediaFacts } from "../../domain/media-facts.ts";
import type { DeclaredMediaRequirements } from "../sdk.ts";

export interface PlannedItem {
  type: "image" | "video";
  /** The content type: the upload's for own media, the URL's extension or the client's for other media. */
  mime?: string;
  size?: number;
  /** What the probe read of the file; null when unknown (external media, or not probed yet). */
  facts: MediaFacts | null;
  /** Crier's own media (an upload): only those can be converted. */
  own: boolean;
}

export interface PlanOptions {
  /** ffmpeg is installed: video conversions are possible. */
  ffmpeg: boolean;
  /** KEEP_MEDIA_METADATA: files keep their location metadata. */
  keepMetadata: boolean;
  /** How messages name the platform ("Instagram") and the file ("media[0]"). */
  displayName?: string;
  label?: string;
}

/** What a converted copy must be. */
export interface OutputSpec {
  contentType: string;
  maxBytes?: number;
  maxWidth?: number;
  maxHeight?: number;
  maxPixels?: number;
  /** Metadata (EXIF, XMP, QuickTime tags, so the location) left out; an image keeps its ICC profile. */
  stripMetadata: boolean;
  /**
   * A video only: this image (media[].thumbnail_url) becomes the first frame, for a platform that takes
   * no cover file (declaration: thumbnail.insert_as_first_frame).
   */
  coverUrl?: string;
}

export type MediaPlan =
  | { kind: "as_is" }
  | { kind: "convert"; output: OutputSpec; reasons: string[] }
  | { kind: "refuse"; code: string; message: string; hint: string };

const IMAGE_MIME_BY_FORMAT: Record<string, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  heif: "image/heic",
  avif: "image/avif",
  tiff: "image/tiff",
};

/** Formats sharp writes as JPEG without losing anything the platform would show (animation is lost). */
const IMAGE_OUTPUT = "image/jpeg";
const VIDEO_OUTPUT = "video/mp4";

/** The declaration's conversions that this machine can do: video ones only with ffmpeg. */
export function possibleConversions(req: DeclaredMediaRequirements, ffmpeg: boolean): Record<string, string> {
  return Object.fromEntries(
    Object.entries(req.convertible_formats).filter(([from]) => ffmpeg || !from.toLowerCase().startsWith("video/")),
  );
}

/** media_requirements as an account shows them on this machine: without video conversions when ffmpeg is absent. */
export function presentedRequirements<R extends DeclaredMediaRequirements>(req: R, ffmpeg: boolean): R {
  return ffmpeg ? req : { ...req, convertible_formats: possibleConversions(req, false) };
}

const num = (v: unknown): number | undefined => (typeof v === "number" && v > 0 ? v : undefined);
const mb = (n: number) => `${Math.round((n / 1_000_000) * 100) / 100} MB (${n} bytes)`;

export function planMedia(req: DeclaredMediaRequirements, item: PlannedItem, opts: PlanOptions): MediaPlan {
  const name = opts.displayName ?? "the platform";
  const label = opts.label ?? "the file";
  const fc = req.file_constraints;
  const facts = item.facts;
  const mime = (item.mime ?? (facts?.kind === "image" ? IMAGE_MIME_BY_FORMAT[facts.format] : undefined))?.toLowerCase();
  const supported = new Set(req.supported_formats.map((f) => f.toLowerCase()));
  const conversions = possibleConversions(req, opts.ffmpeg);
  const declared = Object.keys(req.convertible_formats).map((f) => f.toLowerCase());
  const takes = (ct: string) => supported.size === 0 || supported.has(ct);
  const animated = facts?.kind === "image" && facts.animated;

  const reasons: string[] = [];
  let contentType = mime;
  const out: Omit<OutputSpec, "contentType" | "stripMetadata"> = {};
  const refuse = (code: string, message: string, hint: string): MediaPlan => ({
    kind: "refuse",
    code,
    message: `${label} ${message}`,
    hint,
  });
  const uploadHint =
    "Upload the file to Crier (POST /v1/media/uploads) and use its public_url: Crier converts its own media.";

  // FORMAT: taken as it is, converted to what the platform declares, or refused.
  if (mime && supported.size && !supported.has(mime)) {
    const to = conversions[mime];
    const listed = [...supported, ...declared.filter((f) => f in conversions)].join(", ");
    if (!to) {
      const needsFfmpeg = declared.includes(mime) && mime.startsWith("video/");
      return refuse(
        "unsupported_media_format",
        `is ${mime}; ${name} takes ${listed}.`,
        needsFfmpeg
          ? "Convert the video to MP4 (H.264 and AAC), or install ffmpeg on the server (FFMPEG_PATH) so that Crier converts it."
          : "Convert the file to a supported format.",
      );
    }
    if (!item.own) return refuse("unsupported_media_format", `is ${mime}; ${name} takes ${listed}.`, uploadHint);
    if (animated)
      return refuse(
        "unsupported_media_format",
        `is an animated ${mime}; ${name} takes ${listed}, and converting it would keep only its first frame.`,
        "Send a still image or a video instead.",
      );
    contentType = to;
    reasons.push(`${mime} to ${to}`);
  }

  // VIDEO CODEC: a codec the platform does not play is transcoded to H.264 (own media, with ffmpeg).
  const codecs = Array.isArray(fc.videoCodecs) ? (fc.videoCodecs as string[]).map((c) => c.toLowerCase()) : null;
  if (item.type === "video" && facts?.kind === "video" && codecs && facts.video_codec) {
    if (!codecs.includes(facts.video_codec.toLowerCase())) {
      if (!item.own || !opts.ffmpeg || !takes(VIDEO_OUTPUT))
        return refuse(
          "unsupported_video_codec",
          `is ${facts.video_codec} video; ${name} plays ${codecs.join(", ")}.`,
          item.own ? "Re-encode the video to H.264, or install ffmpeg on the server so that Crier does." : uploadHint,
        );
      contentType = VIDEO_OUTPUT;
      reasons.push(`${facts.video_codec} to h264`);
    }
  }

  // MAX DIMENSIONS: images are downscaled (own media); video is scaled with ffmpeg.
  if (facts?.width && facts.height) {
    const image = item.type === "image";
    const maxW = num(image ? fc.maxImageWidth : fc.maxVideoWidth);
    const maxH = num(image ? fc.maxImageHeight : fc.maxVideoHeight);
    const maxP = image ? num(fc.maxImagePixels) : undefined;
    const over =
      (maxW && facts.width > maxW) || (maxH && facts.height > maxH) || (maxP && facts.width * facts.height > maxP);
    if (over) {
      const limit = [maxW && `${maxW} px wide`, maxH && `${maxH} px high`, maxP && `${maxP} pixels`]
        .filter(Boolean)
        .join(", ");
      const possible = item.own && !animated && (image || opts.ffmpeg);
      if (!possible)
        return refuse(
          image ? "image_too_large" : "video_too_large",
          `is ${facts.width}×${facts.height}; ${name} takes at most ${limit}.`,
          item.own ? "Send a smaller file." : uploadHint,
        );
      Object.assign(out, { maxWidth: maxW, maxHeight: maxH, maxPixels: maxP });
      reasons.push(`${facts.width}×${facts.height} over ${limit}`);
      if (!image && contentType !== VIDEO_OUTPUT && takes(VIDEO_OUTPUT)) contentType = VIDEO_OUTPUT;
    }
  }

  // BYTES: an image is recompressed (and shrunk if need be) under the limit; a video cannot be promised to fit.
  const isGif = (contentType ?? mime) === "image/gif";
  const maxBytes =
    item.type === "video" ? req.max_size_bytes.video : isGif ? req.max_size_bytes.gif : req.max_size_bytes.image;
  if (item.size !== undefined && maxBytes > 0 && item.size > maxBytes) {
    const possible = item.own && item.type === "image" && !animated && takes(IMAGE_OUTPUT);
    if (!possible)
      return refuse(
        "media_too_large",
        `is ${item.size} bytes; ${name} takes at most ${maxBytes}.`,
        item.own || item.type === "video" ? "Compress the file or send a smaller one." : uploadHint,
      );
    out.maxBytes = maxBytes;
    contentType = IMAGE_OUTPUT;
    reasons.push(`${mb(item.size)} over ${mb(maxBytes)}`);
  }
  // A converted image always comes out as JPEG (whatever it was), so its limit is the image one.
  if (item.type === "image" && reasons.length && contentType !== mime && req.max_size_bytes.image > 0)
    out.maxBytes ??= req.max_size_bytes.image;

  // LOCATION: own files with a position in their metadata leave without it, unless KEEP_MEDIA_METADATA.
  const strip = !opts.keepMetadata;
  // Without ffmpeg a video's tags cannot be rewritten: it goes as it is (nothing pretends otherwise).
  const canRewrite = item.type === "image" || opts.ffmpeg;
  if (item.own && strip && facts?.has_location && !reasons.length && canRewrite) reasons.push("location metadata");

  if (!reasons.length) return { kind: "as_is" };
  return {
    kind: "convert",
    output: {
      contentType: contentType ?? (item.type === "video" ? VIDEO_OUTPUT : IMAGE_OUTPUT),
      ...out,
      stripMetadata: strip,
    },
    reasons,
  };
}

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "image/gif": "gif",
  "video/mp4": "mp4",
  "video/quicktime": "mov",
  "video/webm": "webm",
};

/** The file extension of a converted copy. */
export function outputExtension(spec: OutputSpec): string {
  const ext = EXTENSIONS[spec.contentType];
  if (!ext) throw new Error(`no extension for ${spec.contentType}`);
  return ext;
}

/**
 * A short stable name for an output ([a-z0-9-]{1,48}): one converted copy per media and name, however
 * many targets or platforms ask for it.
 */
export function variantKey(spec: OutputSpec): string {
  const parts = [outputExtension(spec)];
  if (spec.maxWidth) parts.push(`w${spec.maxWidth}`);
  if (spec.maxHeight) parts.push(`h${spec.maxHeight}`);
  if (spec.maxPixels) parts.push(`p${spec.maxPixels}`);
  if (spec.maxBytes) parts.push(`b${spec.maxBytes}`);
  parts.push(spec.stripMetadata ? "s" : "k");
  if (spec.coverUrl) parts.push(`c${createHash("sha1").update(spec.coverUrl).digest("hex").slice(0, 12)}`);
  const key = parts.join("-");
  return key.length <= 48 ? key : `${parts[0]}-${createHash("sha1").update(key).digest("hex").slice(0, 20)}`;
}
