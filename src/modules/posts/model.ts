import { t, type Static } from "elysia";
import { Literals, PageQuery, Uuid } from "../../http/model.ts";
import { FIRST_COMMENT_STATUSES, POST_ORIGINS } from "../../domain/enums.ts";
import { POST_STATUSES, TARGET_STATUSES } from "../../domain/status.ts";
import { declaredVariants } from "../../platform/host/registry.ts";
import { MediaInput } from "../../platform/media-item.ts";

export const PostTargetInput = t.Object(
  {
    account_id: t.String({
      description:
        "A connected destination account of this profile. The same account twice makes a thread (later entries reply to earlier ones) where the platform supports threads.",
    }),
    content_override: t.Optional(t.Union([t.String(), t.Null()])),
    platform_options: t.Optional(t.Union([t.Record(t.String(), t.Unknown()), t.Null()])),
    first_comment: t.Optional(
      t.Union([t.String(), t.Null()], {
        description:
          "Extension: a comment the same account posts right after this target's post is published (a reply on X, Threads, Bluesky and Nostr; a comment under the post elsewhere). Only where the account's capabilities.first_comment is true (else 400 first_comment_unsupported); at most media_requirements.first_comment.max_length in its unit (else 400 first_comment_too_long); not empty (400 first_comment_empty); on a thread, only on the first target of the account (400 first_comment_on_thread_item). Its failure never fails the post: see first_comment on the target.",
      }),
    ),
  },
  { additionalProperties: false, title: "PostTargetInput" },
);

const PublishAt = t.Union([t.String({ format: "date-time" }), t.Null()], {
  description:
    "When to publish; absent or null publishes now. More than a minute in the past is 400 publish_at_in_past.",
});

export const RepeatInput = t.Object(
  {
    rule: t.String({
      maxLength: 500,
      description:
        'Extension: an RFC 5545 recurrence rule of the subset Crier takes: FREQ=DAILY, WEEKLY or MONTHLY; INTERVAL (1..366); BYDAY (MO..SU, comma separated; with FREQ=MONTHLY also numbered, 1MO..5MO or -1FR for the last Friday); COUNT (1..1000) or UNTIL (a date, 20261231, the end of that day in time_zone, or a UTC time, 20261231T090000Z), not both. An "RRULE:" prefix is allowed. Anything else (BYHOUR, BYMONTHDAY, BYSETPOS, WKST, FREQ=YEARLY...) is 400 invalid_repeat_rule naming the part. The time of day is not part of the rule: every occurrence keeps the local time of day of publish_at in time_zone (09:00 in Europe/Berlin stays 09:00 across daylight-saving changes; a time a spring-forward night skips moves to the first time after the gap). The first occurrence is the first time the rule gives at or after publish_at (publish_at on a Wednesday with BYDAY=MO starts the next Monday); COUNT counts from there. WEEKLY without BYDAY repeats on the weekday of publish_at; MONTHLY without BYDAY on its day of the month, skipping months that lack it (the 31st), as RFC 5545 does. Examples: "FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=12", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "FREQ=MONTHLY;BYDAY=-1FR;UNTIL=20271231".',
      examples: ["FREQ=WEEKLY;BYDAY=MO;COUNT=10"],
    }),
    time_zone: t.String({
      maxLength: 100,
      description:
        'Extension: the IANA time zone the rule runs in, e.g. "Europe/Berlin" or "UTC"; anything else is 400 invalid_time_zone.',
      examples: ["Europe/Berlin"],
    }),
  },
  {
    additionalProperties: false,
    title: "RepeatInput",
    description:
      "Extension: makes the post the first occurrence of a recurring series (GET /v1/series/{id}). Needs publish_at (400 publish_at_required): the first occurrence's earliest time, whose time of day every occurrence keeps. Each occurrence is its own post with series_id, created one at a time: the next one as soon as the previous has left scheduled (published, failed, cancelled), so edits to the series (PATCH /v1/series/{id}) reach every occurrence not yet published. An occurrence a platform refuses (X refuses a text it already has: error_code duplicate_content) fails once, is not retried, and the series goes on with the next occurrence. Occurrences whose time passed while no engine ran are skipped, not published late. Not with queue: true (400 invalid_repeat).",
  },
);

export const PostCreate = t.Object(
  {
    content: t.Optional(t.String()),
    external_id: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()])),
    media: t.Optional(t.Array(MediaInput, { maxItems: 50 })),
    publish_at: t.Optional(PublishAt),
    queue: t.Optional(
      t.Boolean({
        description:
          "Extension: true schedules each target on its account's next free posting-queue slot (PUT /v1/accounts/{id}/queue) instead of at publish_at. " +
          "Targets on different accounts may land on different slots; the items of a thread and the variants of one account share its slot. The post's publish_at is the earliest of them. " +
          "With publish_at also given: 400 queue_and_publish_at; an account without slots: 400 queue_empty naming the target.",
      }),
    ),
    targets: t.Array(PostTargetInput, { minItems: 1, maxItems: 100 }),
    draft_id: t.Optional(Uuid),
    repeat: t.Optional(t.Union([RepeatInput, t.Null()])),
  },
  { additionalProperties: false, title: "PostCreate" },
);

/**
 * The create body minus draft_id, repeat and queue, every field optional: what is sent replaces what is
 * stored. A series is changed with PATCH /v1/series/{id}, not through one of its occurrences; a queued post
 * leaves the queue when its publish_at or targets are changed, so an edit takes no queue flag.
 */
export const PostPatch = t.Partial(t.Omit(PostCreate, ["draft_id", "repeat", "queue"]), {
  additionalProperties: false,
  title: "PostPatch",
});

export const TargetStatus = Literals(TARGET_STATUSES);
export const PostStatus = Literals(POST_STATUSES);
const PostOrigin = Literals(POST_ORIGINS);

export const Adjustment = t.Object(
  {
    code: t.String({ description: "content_truncated, hashtags_removed or media_dropped." }),
    message: t.String({ description: "What was changed and the platform's limit that made it necessary." }),
  },
  { title: "Adjustment" },
);

const Adjustments = t.Array(Adjustment, {
  description:
    "Extension: what lenient handling (Prefer: handling=lenient on POST /v1/posts) changed so this target fits its platform: " +
    "text cut at a word boundary, hashtags past the cap removed, media of a refused kind or past the counts dropped. Empty when nothing was changed.",
});

export const FirstComment = t.Object(
  {
    text: t.String(),
    status: Literals(FIRST_COMMENT_STATUSES, {
      description:
        "waiting: the post is not published yet; pending: due, posted within seconds (or retried later after a passing failure: error says when); processing: being posted; published; failed (error_code says why; the post stays published); unknown: the platform may or may not have it (a timeout after the creating call): never posted again by itself, and checked on the platform where it can be.",
    }),
    platform_comment_id: t.Union([t.String(), t.Null()]),
    platform_comment_url: t.Union([t.String(), t.Null()]),
    error: t.Union([t.String(), t.Null()]),
    error_code: t.Union([t.String(), t.Null()], {
      description:
        "retry_scheduled (pending), outcome_unknown (unknown), auth_required, account_disconnected, retries_exhausted, or the platform's code.",
    }),
  },
  {
    title: "FirstComment",
    description:
      "Extension: a comment posted by the same account right after the post (PostTargetInput.first_comment).",
  },
);

export const PostTarget = t.Object(
  {
    target_post_id: t.String(),
    account_id: t.Union([t.String(), t.Null()]),
    platform: t.Union([t.String(), t.Null()]),
    target_variant: t.Union([...Literals(declaredVariants()).anyOf, t.Null()]),
    username: t.Union([t.String(), t.Null()]),
    status: TargetStatus,
    error: t.Union([t.String(), t.Null()]),
    error_code: t.Union([t.String(), t.Null()], {
      description:
        "Machine code of the failure: outcome_unknown, auth_required, account_disconnected, retries_exhausted, the platform's code... On a published target, a notice that it was published other than as asked (error says how): youtube_private_unaudited (YouTube kept the video private: the Google API project has not passed YouTube's audit), tiktok_private_unaudited (posted SELF_ONLY: the TikTok app has not passed TikTok's audit).",
    }),
    platform_post_id: t.Union([t.String(), t.Null()]),
    platform_post_url: t.Union([t.String(), t.Null()]),
    scheduled_time: t.Union([t.String({ format: "date-time" }), t.Null()]),
    queue_slot: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description:
        "Extension: the posting-queue slot this target holds (created with queue: true); null when it is not queued, was cancelled, moved off the queue by an edit of publish_at or targets, or published early.",
    }),
    published_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    attempts: t.Integer(),
    content_override: t.Union([t.String(), t.Null()]),
    platform_options: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
    adjustments: Adjustments,
    first_comment: t.Union([FirstComment, t.Null()], {
      description: "Extension: the target's first comment and what became of it; null when it has none.",
    }),
  },
  { title: "PostTarget" },
);

export const Post = t.Object(
  {
    id: t.String(),
    content: t.String(),
    external_id: t.Union([t.String(), t.Null()]),
    media: t.Array(MediaInput),
    origin: t.Union([...PostOrigin.anyOf, t.Null()]),
    publish_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    status: PostStatus,
    draft_id: t.Union([t.String(), t.Null()]),
    series_id: t.Union([t.String(), t.Null()], {
      description:
        "Extension: the recurring series (GET /v1/series/{id}) this post is an occurrence of; null for a post made once.",
    }),
    created_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    updated_at: t.String({ format: "date-time" }),
    targets: t.Array(PostTarget),
  },
  { title: "Post" },
);

export const PostListQuery = t.Object({
  ...PageQuery,
  status: t.Optional(PostStatus),
  origin: t.Optional(PostOrigin),
  account_id: t.Optional(Uuid),
  series_id: t.Optional(
    t.String({ format: "uuid", description: "Extension: only the occurrences of this recurring series." }),
  ),
});

export type PostTargetInput = Static<typeof PostTargetInput>;
export type PostCreate = Static<typeof PostCreate>;
export type RepeatInput = Static<typeof RepeatInput>;
export type PostPatch = Static<typeof PostPatch>;
export type PostTarget = Static<typeof PostTarget>;
export type Post = Static<typeof Post>;
export type PostListQuery = Static<typeof PostListQuery>;

export const Problem = t.Object(
  {
    code: t.String({ description: "The error code POST /v1/posts would answer with for this problem." }),
    message: t.String(),
    hint: t.String(),
    field: t.String({
      description: 'The request field at fault, e.g. "media[0].url" or "targets[1].platform_options.privacy".',
    }),
  },
  { title: "Problem" },
);

export const TargetValidation = t.Object(
  {
    account_id: t.String(),
    platform: t.Union([t.String(), t.Null()]),
    ok: t.Boolean(),
    problems: t.Array(Problem),
    text: t.Union(
      [
        t.Object({
          length: t.Integer({ description: "The text's length as this platform counts it." }),
          limit: t.Integer({
            description: "The most this platform takes for this post (lower for a caption on some).",
          }),
          unit: t.String({
            description: "What is counted: characters, utf16, graphemes, bytes, weighted, emoji_bytes or mastodon.",
          }),
        }),
        t.Null(),
      ],
      { description: "null when the account or its platform is unknown." },
    ),
    media: t.Array(MediaInput, {
      description:
        "The media this target would receive: all of it, never a silent subset (with Prefer: handling=lenient, what is kept; adjustments names what was dropped).",
    }),
    adjustments: Adjustments,
    queue_slot: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description:
        "Extension: with queue: true, the slot this target's account would give it now (nothing is taken); null otherwise.",
    }),
  },
  { title: "TargetValidation" },
);

export const PostValidation = t.Object(
  {
    ok: t.Boolean({ description: "true when POST /v1/posts would accept this body now." }),
    problems: t.Array(Problem, {
      description: "Problems of the post as a whole (media URLs, publish_at, queue, draft_id).",
    }),
    targets: t.Array(TargetValidation),
  },
  { title: "PostValidation" },
);

export type Problem = Static<typeof Problem>;
export type PostValidation = Static<typeof PostValidation>;
