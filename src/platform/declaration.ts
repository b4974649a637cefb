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

export const PLATFORMS = [
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
export type Platform = (typeof PLATFORMS)[number];
export const PlatformEnum = t.UnionEnum(PLATFORMS);

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
  },
  { title: "Capabilities" },
);
export type Capabilities = Static<typeof Capabilities>;

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
    min_video_duration_seconds: t.Union([t.Number(), t.Null()]),
    max_video_duration_seconds: t.Union([t.Number(), t.Null()]),
    aspect_ratio: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
    thumbnail: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
    alt_text: t.Union([AltTextSupport, t.Null()], {
      description:
        "Extension: per kind of media, whether media[].alt_text is sent and its longest length (checked at creation: alt_text_too_long). null: the platform has no alt text and ignores it.",
    }),
  },
  { title: "MediaRequirements" },
);
export type MediaRequirements = Static<typeof MediaRequirements>;
