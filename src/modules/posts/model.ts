import { t, type Static } from "elysia";
import { PageQuery, Uuid } from "../../http/model.ts";
import { POST_STATUSES, TARGET_STATUSES } from "../../engine/status.ts";

const nonNegInt = () => t.Integer({ minimum: 0 });

/** MediaInput of the spec. The url is checked by the service (trimmed, absolute http/https, else invalid_media). */
export const MediaInput = t.Object({
  url: t.String({ description: "Absolute http(s) URL, e.g. data.public_url of an upload; surrounding whitespace is trimmed." }),
  type: t.Optional(t.Union([t.Literal("image"), t.Literal("video")], { description: "Guessed from the URL's extension when absent." })),
  width: t.Optional(nonNegInt()),
  height: t.Optional(nonNegInt()),
  size: t.Optional(nonNegInt()),
  duration: t.Optional(t.Number({ minimum: 0 })),
  thumbnail_url: t.Optional(t.String()),
}, { additionalProperties: false, title: "MediaInput" });

export const PostTargetInput = t.Object({
  account_id: t.String({ description: "A connected destination account of this profile. The same account twice makes a thread (later entries reply to earlier ones) where the platform supports threads." }),
  content_override: t.Optional(t.Union([t.String(), t.Null()])),
  platform_options: t.Optional(t.Union([t.Record(t.String(), t.Unknown()), t.Null()])),
}, { additionalProperties: false, title: "PostTargetInput" });

const PublishAt = t.Union([t.String({ format: "date-time" }), t.Null()], {
  description: "When to publish; absent or null publishes now. More than a minute in the past is 400 publish_at_in_past.",
});

export const PostCreate = t.Object({
  content: t.Optional(t.String()),
  external_id: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()])),
  media: t.Optional(t.Array(MediaInput, { maxItems: 50 })),
  publish_at: t.Optional(PublishAt),
  targets: t.Array(PostTargetInput, { minItems: 1, maxItems: 100 }),
  draft_id: t.Optional(Uuid),
}, { additionalProperties: false, title: "PostCreate" });

export const PostPatch = t.Object({
  content: t.Optional(t.String()),
  external_id: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()])),
  media: t.Optional(t.Array(MediaInput, { maxItems: 50 })),
  publish_at: t.Optional(PublishAt),
  targets: t.Optional(t.Array(PostTargetInput, { minItems: 1, maxItems: 100 })),
}, { additionalProperties: false, title: "PostPatch" });

// Unions of literals, not UnionEnum: an optional UnionEnum query parameter got its first value as a default.
export const TargetStatus = t.Union(TARGET_STATUSES.map((s) => t.Literal(s)));
export const PostStatus = t.Union(POST_STATUSES.map((s) => t.Literal(s)));

export const PostTarget = t.Object({
  target_post_id: t.String(),
  account_id: t.Union([t.String(), t.Null()]),
  platform: t.Union([t.String(), t.Null()]),
  target_variant: t.Union([t.Literal("spotlight"), t.Literal("public_story"), t.Null()]),
  username: t.Union([t.String(), t.Null()]),
  status: TargetStatus,
  error: t.Union([t.String(), t.Null()]),
  error_code: t.Union([t.String(), t.Null()], { description: "Machine code of the failure: outcome_unknown, auth_required, account_disconnected, retries_exhausted, the platform's code..." }),
  platform_post_id: t.Union([t.String(), t.Null()]),
  platform_post_url: t.Union([t.String(), t.Null()]),
  scheduled_time: t.Union([t.String({ format: "date-time" }), t.Null()]),
  published_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  attempts: t.Integer(),
  content_override: t.Union([t.String(), t.Null()]),
  platform_options: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
}, { title: "PostTarget" });

export const Post = t.Object({
  id: t.String(),
  content: t.String(),
  external_id: t.Union([t.String(), t.Null()]),
  media: t.Array(MediaInput),
  origin: t.Union([t.Literal("ui"), t.Literal("api"), t.Literal("workflow"), t.Null()]),
  publish_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  status: PostStatus,
  draft_id: t.Union([t.String(), t.Null()]),
  created_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  updated_at: t.String({ format: "date-time" }),
  targets: t.Array(PostTarget),
}, { title: "Post" });

export const PostListQuery = t.Object({
  ...PageQuery,
  status: t.Optional(PostStatus),
  origin: t.Optional(t.Union([t.Literal("ui"), t.Literal("api"), t.Literal("workflow")])),
  account_id: t.Optional(Uuid),
});


export type MediaInput = Static<typeof MediaInput>;
export type PostTargetInput = Static<typeof PostTargetInput>;
export type PostCreate = Static<typeof PostCreate>;
export type PostPatch = Static<typeof PostPatch>;
export type PostTarget = Static<typeof PostTarget>;
export type Post = Static<typeof Post>;
export type PostListQuery = Static<typeof PostListQuery>;
