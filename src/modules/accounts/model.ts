import { t, type Static } from "elysia";
import { Type } from "@sinclair/typebox";

// Response-only integers: elysia's t.Integer also accepts numeric strings through a transform, which makes
// every response be walked by TypeBox's Encode on top of the check; answers hold real integers, so the
// plain integer (same OpenAPI) is checked without that walk.
const Int = Type.Integer;

export const PLATFORMS = [
  "bluesky", "facebook", "farcaster", "nostr", "telegram", "instagram", "linkedin", "pinterest",
  "reddit", "snapchat", "threads", "tiktok", "twitter", "vimeo", "youtube",
] as const;
export type Platform = (typeof PLATFORMS)[number];
export const PlatformEnum = t.UnionEnum(PLATFORMS);

export const ConnectionMode = t.Union([
  t.Literal("oauth_authorization_url"), t.Literal("credential_form_url"), t.Literal("managed_signer"), t.Literal("remote_signer"),
]);

export const Capabilities = t.Object({
  connection_mode: t.String(),
  destination: t.Boolean(),
  source: t.Boolean(),
  backfill: t.Boolean(),
  text: t.Boolean(),
  images: t.Boolean(),
  video: t.Boolean(),
  replies: t.Boolean(),
  threads: t.Boolean(),
}, { title: "Capabilities" });

export const MediaRequirements = t.Object({
  supported_formats: t.Array(t.String()),
  convertible_formats: t.Record(t.String(), t.String()),
  max_size_bytes: t.Object({ image: Int(), video: Int(), gif: Int() }),
  file_constraints: t.Object({
    maxFiles: Int(),
    maxVideoFiles: Int(),
    maxImageFiles: Int(),
    maxGifFiles: t.Optional(Int()),
    allowMixedMedia: t.Boolean(),
    gifBehavior: t.Optional(t.String()),
  }, { additionalProperties: true }),
  required_media: t.Union([t.Object({
    minFiles: Int({ minimum: 1 }),
    acceptedTypes: t.Array(t.Union([t.Literal("image"), t.Literal("video")])),
    errorCode: t.String(),
    errorMessage: t.String(),
  }), t.Null()]),
  max_hashtags: t.Union([Int({ minimum: 0 }), t.Null()]),
  min_video_duration_seconds: t.Union([t.Number(), t.Null()]),
  max_video_duration_seconds: t.Union([t.Number(), t.Null()]),
  aspect_ratio: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
  thumbnail: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
}, { title: "MediaRequirements" });

export const AccountStatus = t.Union([t.Literal("active"), t.Literal("auth_required"), t.Literal("disconnected")]);

export const Account = t.Object({
  id: t.String(),
  platform: PlatformEnum,
  username: t.String(),
  avatar_url: t.Union([t.String(), t.Null()]),
  status: AccountStatus,
  capabilities: t.Union([Capabilities, t.Null()]),
  media_requirements: t.Union([MediaRequirements, t.Null()]),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
}, { title: "Account" });

export const DeleteResult = t.Object({
  deleted: t.Boolean(),
  id: t.String(),
  disconnected: t.Optional(t.Boolean({ description: "true when an account was disconnected rather than deleted" })),
  provider_revocation_required: t.Union([t.Boolean(), t.Null()]),
  provider_revocation_url: t.Union([t.String(), t.Null()]),
  message: t.Union([t.String(), t.Null()]),
}, { title: "DeleteResult" });

export type Account = Static<typeof Account>;
export type Capabilities = Static<typeof Capabilities>;
export type MediaRequirements = Static<typeof MediaRequirements>;
export type DeleteResult = Static<typeof DeleteResult>;
