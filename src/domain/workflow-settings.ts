/**
 * WorkflowSettings of the spec: one TypeBox schema is the validation (the workflows routes), the type
 * (the module and the engine) and the OpenAPI description. Rules that need the workflow's accounts (a
 * key that is not a target, a platform block on another platform) are checked by the workflows service.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** Platforms whose destinations take caption_ending, remove_comment_dm_prompts and adapt_caption (the spec's list). */
export const CAPTION_PLATFORMS = [
  "instagram",
  "threads",
  "twitter",
  "facebook",
  "linkedin",
  "bluesky",
  "pinterest",
  "youtube",
  "tiktok",
] as const;

export const CONTENT_KINDS = ["text", "image", "quote", "video"] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];

const Tags = T.Array(T.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 100,
  default: [],
  description: "Hashtags with or without #, matched case-insensitively.",
});

export const ContentFilters = T.Object(
  {
    types: T.Optional(
      T.Object(
        {
          text: T.Optional(T.Boolean({ default: true })),
          image: T.Optional(T.Boolean({ default: true })),
          quote: T.Optional(T.Boolean({ default: true })),
          video: T.Optional(T.Boolean({ default: true })),
        },
        {
          additionalProperties: false,
          default: {},
          description:
            "Which kinds of source posts are copied (all by default); the kind comes from the source platform.",
        },
      ),
    ),
    hashtags: T.Optional(
      T.Object(
        { include: T.Optional(Tags), exclude: T.Optional(Tags) },
        {
          additionalProperties: false,
          default: {},
          description:
            "include: only posts with at least one of these tags (empty: any); exclude: never posts with any of these (exclude wins).",
        },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

export const SnapchatDestination = T.Object(
  {
    publish_targets: T.Array(T.Union([T.Literal("spotlight"), T.Literal("public_story")]), {
      minItems: 1,
      uniqueItems: true,
    }),
    locale: T.Optional(T.String({ pattern: "^[a-z]{2}_[A-Z]{2}$", default: "en_US" })),
  },
  { additionalProperties: false },
);

export const ThreadsDestination = T.Object(
  {
    caption_max_length: T.Optional(
      T.Integer({
        minimum: 1,
        maximum: 500,
        default: 500,
        description: "Captions are cut to this length, preferring whole words.",
      }),
    ),
  },
  { additionalProperties: false },
);

// No `default` on these two: "at least one of them" must be judged on what the caller sent.
export const InstagramDestination = T.Object(
  {
    publish_as_trial_reel: T.Optional(
      T.Boolean({
        description: "Default false. Eligible single-video Reels publish as Trial Reels for non-followers.",
      }),
    ),
    remove_mentions: T.Optional(
      T.Boolean({ description: "Default false. Strips the @ of mentions; usernames and e-mail addresses stay." }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: "At least one of publish_as_trial_reel, remove_mentions.",
  },
);

export const RedditDestination = T.Object(
  {
    subreddit: T.String({
      pattern: "^[A-Za-z0-9_]{2,21}$",
      description: "Subreddit name without r/ (required for a Reddit destination).",
    }),
    post_type: T.Optional(T.Union([T.Literal("auto"), T.Literal("self"), T.Literal("link")], { default: "auto" })),
    flair_id: T.Optional(T.String()),
    flair_text: T.Optional(T.String()),
    nsfw: T.Optional(T.Boolean({ default: false })),
    spoiler: T.Optional(T.Boolean({ default: false })),
    send_replies: T.Optional(T.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const DestinationSettings = T.Object(
  {
    minimum_interval_minutes: T.Optional(
      T.Integer({ minimum: 1, description: "Copies to this destination are at least this far apart." }),
    ),
    caption_position: T.Optional(
      T.Union([T.Literal("before"), T.Literal("after")], {
        default: "after",
        description: "Where caption_ending goes.",
      }),
    ),
    remove_comment_dm_prompts: T.Optional(
      T.Boolean({
        default: false,
        description:
          "Removes 'comment X below', 'DM me', 'link in bio' and similar lines first. Caption platforms only.",
      }),
    ),
    adapt_caption: T.Optional(
      T.Boolean({
        default: false,
        description:
          "AI rewrite for the destination (needs AI_BASE_URL and AI_MODEL); links kept; any failure publishes the original caption. Caption platforms only.",
      }),
    ),
    adapt_caption_instructions: T.Optional(
      T.String({ maxLength: 1000, description: "Replaces the built-in guidance for the destination platform." }),
    ),
    caption_ending: T.Optional(
      T.String({
        maxLength: 2000,
        description:
          "Custom text added before or after the caption; empty clears it. Only on instagram, threads, twitter, facebook, linkedin, bluesky, pinterest, youtube, tiktok.",
      }),
    ),
    snapchat: T.Optional(SnapchatDestination),
    threads: T.Optional(ThreadsDestination),
    instagram: T.Optional(InstagramDestination),
    reddit: T.Optional(RedditDestination),
  },
  { additionalProperties: false },
);

export const WorkflowSettings = T.Object(
  {
    content_filters: T.Optional(ContentFilters),
    platform_settings: T.Optional(
      T.Object(
        {
          tiktok: T.Optional(
            T.Object(
              {
                keep_source_thumbnail: T.Optional(
                  T.Boolean({
                    default: true,
                    description:
                      "When false, TikTok workflow posts do not prepend the source thumbnail as first video frame.",
                  }),
                ),
              },
              { additionalProperties: false, default: {} },
            ),
          ),
        },
        { additionalProperties: false, default: {} },
      ),
    ),
    destination_publish_settings: T.Optional(
      T.Record(T.String(), DestinationSettings, {
        default: {},
        description: "Keyed by a target account id (any other key is a 400).",
      }),
    ),
  },
  { additionalProperties: false, title: "WorkflowSettings" },
);

export type WorkflowSettings = Static<typeof WorkflowSettings>;
export type DestinationSettings = Static<typeof DestinationSettings>;

/** The settings with every default filled in, as stored and returned. */
export function withDefaults(settings: WorkflowSettings | undefined): WorkflowSettings {
  const out = Value.Default(WorkflowSettings, structuredClone(settings ?? {})) as WorkflowSettings;
  // TypeBox does not descend into Record values: each destination gets its defaults here.
  for (const [key, value] of Object.entries(out.destination_publish_settings ?? {})) {
    const d = Value.Default(DestinationSettings, value) as DestinationSettings;
    if (d.instagram) d.instagram = { publish_as_trial_reel: false, remove_mentions: false, ...d.instagram };
    out.destination_publish_settings![key] = d;
  }
  return out;
}
