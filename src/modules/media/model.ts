import { t, type Static } from "elysia";
import { MediaFacts } from "../../domain/media-facts.ts";
import { MEDIA_CONTENT_TYPES, MEDIA_KIND_SHORTHANDS } from "../../storage/keys.ts";

export const MediaContentTypeSchema = t.Union(
  MEDIA_CONTENT_TYPES.map((ct) => t.Literal(ct)),
  {
    description: "The file's type. The spec's six types plus image/gif.",
    "x-error-code": "invalid_content_type",
    "x-error-message": `content_type is required and must be one of ${MEDIA_CONTENT_TYPES.join(", ")}`,
    "x-error-hint": "Send the MIME type of the file you will upload, matching its extension.",
  },
);

/**
 * What a ticket may be asked for: a MIME type, or the shorthand `image` or `video` that clients of the
 * upstream service send, resolved from the file name's extension.
 */
export const UploadContentTypeSchema = t.Union(
  [...MEDIA_CONTENT_TYPES, ...MEDIA_KIND_SHORTHANDS].map((ct) => t.Literal(ct)),
  {
    description:
      "The file's type: one of the spec's six MIME types, image/gif, or (extension, as the upstream service accepts) " +
      "the shorthand `image` or `video`, in which case the type is taken from the file name's extension (.mp4 → video/mp4, " +
      ".mov → video/quicktime, .png → image/png, …) and the ticket answers the full type.",
    "x-error-code": "invalid_content_type",
    "x-error-message": `content_type is required and must be one of ${[...MEDIA_CONTENT_TYPES, ...MEDIA_KIND_SHORTHANDS].join(", ")}`,
    "x-error-hint": "Send the MIME type of the file you will upload (or image or video), matching its extension.",
  },
);

export const UploadCreate = t.Object(
  {
    filename: t.String({
      description: "The original file name with its extension, without any folder (photo.jpg).",
      "x-error-code": "invalid_filename",
      "x-error-message": "filename is required",
      "x-error-hint": "Send the original file name with its extension, like photo.jpg.",
    }),
    content_type: UploadContentTypeSchema,
  },
  { additionalProperties: false, title: "UploadCreate" },
);

export const UploadTicket = t.Object(
  {
    content_type: t.String(),
    media_id: t.String({ description: "Encoded, opaque id: GET /v1/media/{media_id} after the upload." }),
    path: t.String({ description: "The storage path of the file." }),
    upload: t.Object({
      path: t.String(),
      token: t.String({ description: "Temporary credential, already part of signedUrl." }),
      signedUrl: t.String({ description: "PUT the raw bytes here with the ticket's Content-Type, before expires_at." }),
    }),
    expires_at: t.String({
      format: "date-time",
      description: "Extension: when signedUrl stops working (UPLOAD_TICKET_TTL).",
    }),
    max_bytes: t.Integer({ description: "Extension: the largest body signedUrl accepts for this content type." }),
  },
  { title: "UploadTicket" },
);

export const Media = t.Object(
  {
    id: t.String(),
    path: t.String(),
    filename: t.String({ description: "Extension: the file name the upload was created with (photo.jpg)." }),
    uploaded_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description: "Extension: when the bytes arrived and were read; the order of GET /v1/media.",
    }),
    public_url: t.String({ description: "Pass as media[].url of a post or draft." }),
    content_type: t.String({ description: "Extension." }),
    size: t.Integer({ description: "Extension: bytes stored." }),
    width: t.Union([t.Integer(), t.Null()], {
      description: "Extension: pixels as displayed, from facts; null when unknown.",
    }),
    height: t.Union([t.Integer(), t.Null()], {
      description: "Extension: pixels as displayed, from facts; null when unknown.",
    }),
    duration: t.Union([t.Number(), t.Null()], {
      description: "Extension: seconds of video, from facts; null for images and when unknown.",
    }),
    facts: t.Union([MediaFacts, t.Null()], {
      description:
        "Extension: what Crier read from the file when its upload completed (sharp for images, ffprobe for video): " +
        "an image's format, size, EXIF orientation, animation and whether it carries a location; a video's container, " +
        "codecs, duration, size, rotation and frame rate. A file neither can read is refused with 422 unreadable_media. " +
        "null for a video when the server has no ffprobe (FFPROBE_PATH): its facts are unknown.",
    }),
    poster_url: t.Union([t.String(), t.Null()], {
      description:
        "Extension: a still of a video (a JPEG of at most 1280 px taken a second in), made in the background once the upload completes when ffmpeg is installed; shown in previews of posts whose media item has no thumbnail_url. null for images, before it is made, and without ffmpeg.",
    }),
  },
  { title: "Media" },
);

export const MediaListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: "Page size, 1..100 (default 20)." })),
  after: t.Optional(t.String({ format: "date-time", description: "meta.next_after of the previous page." })),
  after_id: t.Optional(
    t.String({ format: "uuid", description: "meta.next_after_id of the previous page; sent together with after." }),
  ),
  type: t.Optional(
    t.Union([t.Literal("image"), t.Literal("video")], {
      description: "Extension: only images (GIFs included) or only videos.",
    }),
  ),
});

export const UploadReceipt = t.Object(
  {
    id: t.String(),
    path: t.String(),
    size: t.Integer(),
  },
  { title: "UploadReceipt" },
);

export const UploadFromUrl = t.Object(
  {
    url: t.String({
      description:
        "A public http(s) URL of the file. Fetched by the server through the media guard: loopback, private, link-local and metadata addresses are refused; size capped by MAX_IMAGE_BYTES, MAX_GIF_BYTES, MAX_VIDEO_BYTES.",
    }),
    filename: t.Optional(
      t.String({ description: "A file name with its extension; by default the URL's last path segment." }),
    ),
  },
  { additionalProperties: false, title: "UploadFromUrl" },
);

export const UploadBase64 = t.Object(
  {
    filename: UploadCreate.properties.filename,
    content_type: MediaContentTypeSchema,
    data: t.String({
      minLength: 1,
      description:
        "The file's bytes, base64-encoded (a data: URL prefix is accepted). At most 5 MiB once decoded, and the whole request within MAX_BODY_BYTES (default 1 MiB, about 750 KB of file); larger files: upload from a URL or PUT to an upload ticket.",
    }),
  },
  { additionalProperties: false, title: "UploadBase64" },
);

export type UploadFromUrl = Static<typeof UploadFromUrl>;
export type UploadBase64 = Static<typeof UploadBase64>;
export type UploadCreate = Static<typeof UploadCreate>;
export type UploadTicket = Static<typeof UploadTicket>;
export type Media = Static<typeof Media>;
export type MediaListQuery = Static<typeof MediaListQuery>;
