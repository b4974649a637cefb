/**
 * What a plugin declares about its platform, as the API shows it on every account (spec: Account
 * capabilities and media_requirements). The schemas live here, with the plugin contract, so the contract
 * stands on its own; the accounts module builds its Account model from them.
 */
import { t, type Static } from "elysia";
import { Type } from "@sinclair/typebox";

// Response-only integers: elysia's t.Integer also accepts numeric strings through a transform, which makes
// every response be walked by TypeBox's Encode on top of the check; answers hold real integers, so the
// plain integer (same OpenAPI) is checked without that walk.
const Int = Type.Integer;

/** The upstream API's platforms, in its order: first and unchanged everywhere Crier lists platforms. */
export const SPEC_PLATFORMS = [
  "bluesky",
  "facebook",
  "farcaster",
  "nostr",
  "telegram",
  "instagram",
  "linkedin",
  "pinterest",
  "reddit",
  "snapchat",
  "threads",
  "tiktok",
  "twitter",
  "vimeo",
  "youtube",
] as const;

/**
 * Crier's own platforms beyond the upstream API's enum, listed after the fifteen. An operator turns any
 * platform off with PLATFORMS_DISABLED, so a client that knows only the fifteen never meets these.
 */
export const EXTENSION_PLATFORMS = ["mastodon", "google_business", "discord", "slack"] as const;

export const PLATFORMS = [...SPEC_PLATFORMS, ...EXTENSION_PLATFORMS] as const;
export type Platform = (typeof PLATFORMS)[number];
export const PlatformEnum = t.UnionEnum(PLATFORMS, {
  description:
    `The upstream API's ${SPEC_PLATFORMS.length} platforms, then Crier's extensions (${EXTENSION_PLATFORMS.join(", ")}). ` +
    "An operator may turn any platform off (PLATFORMS_DISABLED): its accounts and connect flow are then absent.",
});

export const CONNECTION_MODES = [
  "oauth_authorization_url",
  "credential_form_url",
  "managed_signer",
  "remote_signer",
] as const;
export type ConnectionMode = (typeof CONNECTION_MODES)[number];

export const Capabilities = t.Object(
  {
    connection_mode: t.String(),
    destination: t.Boolean(),
    source: t.Boolean(),
    backfill: t.Boolean(),
    text: t.Boolean(),
    images: t.Boolean(),
    video: t.Boolean(),
    replies: t.Boolean(),
    threads: t.Boolean(),
    alt_text: t.Boolean({
      description:
        "Extension: whether media[].alt_text reaches the platform (see media_requirements.alt_text); false: it is ignored.",
    }),
    first_comment: t.Boolean({
      description:
        "Extension: whether a target may carry first_comment, posted by the same account right after the post (see media_requirements.first_comment for its limit and kind).",
    }),
  },
  { title: "Capabilities" },
);
export type Capabilities = Static<typeof Capabilities>;

const Ratio = (description = 'Width to height, "w:h" (e.g. "4:5", "1.91:1").') =>
  t.String({ pattern: "^[0-9]+(\\.[0-9]+)?:[0-9]+(\\.[0-9]+)?$", description });
const RatioRange = (what: string) =>
  t.Object(
    { min: t.Optional(Ratio()), max: t.Optional(Ratio()) },
    { description: `The narrowest (min) and widest (max) ${what} the platform takes, bounds included.` },
  );

/**
 * The aspect ratios a platform takes, one shape for every platform: checked at creation against each
 * media item (src/platform/host/media-rules.ts). Other keys are facts shown to clients and not checked.
 */
export const AspectRatio = t.Object(
  {
    image: t.Optional(RatioRange("image")),
    video: t.Optional(RatioRange("video")),
    recommended: t.Optional(Ratio('What the platform recommends, "w:h"; not checked.')),
  },
  { additionalProperties: true, title: "AspectRatio" },
);
export type AspectRatio = Static<typeof AspectRatio>;

const Count = (description: string) => t.Optional(Int({ minimum: 0, description }));
const Rate = (description: string) => t.Optional(t.Number({ minimum: 0, description }));

/** The picture and frame-rate limits among file_constraints that Crier checks at creation; all optional. */
const PictureConstraints = {
  minImageWidth: Count("Pixels; a narrower image is refused (media_too_small)."),
  minImageHeight: Count("Pixels; a lower image is refused (media_too_small)."),
  minVideoWidth: Count("Pixels; a narrower video is refused (media_too_small)."),
  minVideoHeight: Count("Pixels; a lower video is refused (media_too_small)."),
  maxVideoWidth: Count("Pixels; a wider video is refused (video_dimensions_too_large)."),
  maxVideoHeight: Count("Pixels; a taller video is refused (video_dimensions_too_large)."),
  minFrameRate: Rate("Frames per second; a slower video is refused (invalid_frame_rate)."),
  maxFrameRate: Rate("Frames per second; a faster video is refused (invalid_frame_rate)."),
  videoCodecs: t.Optional(
    t.Array(t.String(), { description: 'Video codecs the platform takes, as ffprobe names them ("h264", "hevc").' }),
  ),
  maxImagePixels: Count("Width times height, at most."),
};

/** How a platform takes one kind of media's alt text: the most it takes, counted in its unit. */
const AltTextRule = t.Union(
  [
    t.Object({
      max_length: t.Union([Int({ minimum: 1 }), t.Null()], {
        description: "The most the platform takes; null: no limit of its own.",
      }),
      unit: t.UnionEnum(["characters", "utf16", "graphemes", "bytes"], {
        description: "What is counted: characters (code points), UTF-16 units, graphemes or UTF-8 bytes.",
      }),
    }),
    t.Null(),
  ],
  { description: "null: this kind of media carries no alt text on the platform (the field is ignored)." },
);

/** Extension: where a platform takes alt text (media[].alt_text) and how long it may be. */
export const AltTextSupport = t.Object({ image: AltTextRule, video: AltTextRule }, { title: "AltTextSupport" });
export type AltTextSupport = Static<typeof AltTextSupport>;

/** Extension: a platform's first comment, as media_requirements.first_comment shows it. */
export const FirstCommentRule = t.Object(
  {
    kind: t.Union([t.Literal("comment"), t.Literal("reply")]),
    max_length: Int({ minimum: 1 }),
    unit: t.String({ description: "How max_length counts: characters, utf16, graphemes, bytes, weighted." }),
  },
  { title: "FirstCommentRule" },
);

export const MediaRequirements = t.Object(
  {
    supported_formats: t.Array(t.String()),
    convertible_formats: t.Record(t.String(), t.String()),
    max_size_bytes: t.Object({ image: Int(), video: Int(), gif: Int() }),
    file_constraints: t.Object(
      {
        maxFiles: Int(),
        maxVideoFiles: Int(),
        maxImageFiles: Int(),
        maxGifFiles: t.Optional(Int()),
        allowMixedMedia: t.Boolean(),
        gifBehavior: t.Optional(t.String()),
        ...PictureConstraints,
      },
      { additionalProperties: true },
    ),
    required_media: t.Union([
      t.Object({
        minFiles: Int({ minimum: 1 }),
        acceptedTypes: t.Array(t.Union([t.Literal("image"), t.Literal("video")])),
        errorCode: t.String(),
        errorMessage: t.String(),
      }),
      t.Null(),
    ]),
    max_hashtags: t.Union([Int({ minimum: 0 }), t.Null()]),
    min_video_duration_seconds: t.Union([t.Number(), t.Null()], {
      description: "A shorter video is refused at creation (video_too_short); null: no minimum.",
    }),
    max_video_duration_seconds: t.Union([t.Number(), t.Null()], {
      description: "A longer video is refused at creation (video_too_long); null: no maximum.",
    }),
    aspect_ratio: t.Union([AspectRatio, t.Null()]),
    thumbnail: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
    alt_text: t.Union([AltTextSupport, t.Null()], {
      description:
        "Extension: per kind of media, whether media[].alt_text is sent and its longest length (checked at creation: alt_text_too_long). null: the platform has no alt text and ignores it.",
    }),
    first_comment: t.Union([FirstCommentRule, t.Null()], {
      description:
        "Extension: the limit of a target's first_comment (checked at creation: first_comment_too_long) and whether it is a comment under the post or a reply to it. null: the platform takes no first comment (a target with one is 400 first_comment_unsupported).",
    }),
  },
  {
    title: "MediaRequirements",
    description:
      "What the platform takes, checked when a post is created, validated or changed: each media item's " +
      'duration, aspect ratio (aspect_ratio.image / .video, min and max as "w:h"), dimensions and frame rate ' +
      "(file_constraints.minImageWidth, minImageHeight, minVideoWidth, minVideoHeight, maxVideoWidth, " +
      "maxVideoHeight, minFrameRate, maxFrameRate) are compared with what Crier read from the file when it is " +
      "Crier's own upload, else with the width, height and duration the request gives; a rule whose numbers " +
      "are unknown is skipped. file_constraints.videoCodecs lists the video codecs the platform takes.",
  },
);
export type MediaRequirements = Static<typeof MediaRequirements>;
