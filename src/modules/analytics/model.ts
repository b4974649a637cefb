import { t, type Static } from "elysia";
import { Uuid } from "../../http/model.ts";
import { METRICS_STATUSES } from "../../domain/metrics-status.ts";
import { PLATFORMS } from "../../platform/declaration.ts";

const Count = t.Union([t.Integer({ minimum: 0 }), t.Null()], {
  description: "null when the platform does not give this number (never 0 in its place).",
});
const Ratio = t.Union([t.Number(), t.Null()]);
const DateTime = t.String({ format: "date-time" });
const DateTimeOrNull = t.Union([DateTime, t.Null()]);
export const MetricsStatus = t.Union(
  METRICS_STATUSES.map((s) => t.Literal(s)),
  {
    description:
      "What the platform said at the last read: ok; reconnect (reconnect the account to read numbers); limited (some numbers need a permission the account did not grant); unavailable (the platform request failed; the previous numbers stay, try later).",
  },
);

export const AnalyticsQuery = t.Object(
  {
    days: t.Optional(
      t.Integer({
        minimum: 7,
        maximum: 365,
        default: 30,
        description: "The range: the last N days up to now, 7..365 (default 30).",
      }),
    ),
    account_id: t.Optional(Uuid),
    platform: t.Optional(t.Union(PLATFORMS.map((p) => t.Literal(p)))),
    limit: t.Optional(
      t.Integer({
        minimum: 1,
        maximum: 100,
        default: 50,
        description: "At most this many posts, newest first (1..100, default 50); truncated says when more existed.",
      }),
    ),
    time_zone: t.Optional(
      t.String({
        maxLength: 64,
        description:
          'Extension: the IANA time zone whose calendar days `daily` counts ("Europe/Berlin"; default "UTC"); else 400 invalid_time_zone.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AnalyticsQuery = Static<typeof AnalyticsQuery>;

export const AnalyticsAccount = t.Object({
  id: t.String(),
  platform: t.String(),
  username: t.Union([t.String(), t.Null()]),
  metrics_status: MetricsStatus,
  posts_with_views: t.Integer({ minimum: 0 }),
  median_views: t.Union([t.Number(), t.Null()], {
    description: "Median views of the account's posts in range that have views; null with fewer than 3.",
  }),
  followers: Count,
  followers_observed_at: DateTimeOrNull,
});

export const AnalyticsDestination = t.Object({
  platform: t.String(),
  account_id: t.String(),
  username: t.Union([t.String(), t.Null()]),
  url: t.Union([t.String(), t.Null()]),
  published_at: DateTime,
  views: Count,
  likes: Count,
  comments: Count,
  shares: Count,
  saves: Count,
  engagement_rate: t.Union([t.Number(), t.Null()], {
    description: "(likes+comments+shares+saves)/views, 4 decimals; null without views.",
  }),
  views_vs_account_median: t.Union([t.Number(), t.Null()], {
    description: "This copy's views divided by its account's median_views in range, 4 decimals.",
  }),
});

export const AnalyticsPost = t.Object({
  id: t.String({
    description: "The post's id for posts made through Crier, else an id of the platform post in Crier.",
  }),
  post_id: t.Union([t.String(), t.Null()], {
    description: "For GET /v1/posts/{id}/analytics; null for posts made outside the service.",
  }),
  title: t.String({ description: "First line of the caption, at most 90 characters, cut between whole characters." }),
  caption: t.String(),
  thumbnail_url: t.Union([t.String(), t.Null()], {
    description:
      "The post's picture: its media's thumbnail_url or image, the platform's cover, or for a video of Crier's own media without one, the poster frame Crier made of it (needs ffmpeg).",
  }),
  media_url: t.Union([t.String(), t.Null()]),
  media_type: t.Union([t.Literal("video"), t.Literal("photo")]),
  published_at: DateTime,
  origin: t.Union([t.Literal("postonce"), t.Literal("native")], {
    description:
      "postonce when at least one copy went out through the service, native when posted directly on the platform.",
  }),
  destinations: t.Array(AnalyticsDestination),
});

const Sum = t.Union([t.Integer({ minimum: 0 }), t.Null()], {
  description: "null when none of the day's copies gives this number (a day without posts too).",
});

export const AnalyticsDay = t.Object({
  date: t.String({ format: "date", description: "The calendar day in time_zone, YYYY-MM-DD." }),
  posts: t.Integer({ minimum: 0, description: "Copies (destinations) published that day." }),
  views: Sum,
  engagement: Sum,
});

export const PostAnalytics = t.Object(
  {
    range: t.Object({ days: t.Integer(), start: DateTime, end: DateTime }),
    accounts: t.Array(AnalyticsAccount),
    posts: t.Array(AnalyticsPost),
    daily: t.Array(AnalyticsDay, {
      description:
        "Extension: every calendar day of the range in time_zone, oldest first, with the views and the interactions (likes+comments+shares+saves) of the copies published that day, as last read. It counts every post in range of the accounts asked for, not only the `limit` returned.",
    }),
    truncated: t.Boolean({
      description: "More posts existed in range than were returned (raise limit or narrow the range).",
    }),
    refreshing: t.Boolean({ description: "A read of this profile's numbers is due or under way." }),
    updated_at: DateTime,
  },
  { title: "PostAnalytics" },
);
export type PostAnalytics = Static<typeof PostAnalytics>;

export const PostTargetAnalyticsEntry = t.Object({
  target_post_id: t.String(),
  target_variant: t.Union([t.String(), t.Null()]),
  account_id: t.Union([t.String(), t.Null()]),
  platform: t.String(),
  platform_post_id: t.Union([t.String(), t.Null()]),
  url: t.Union([t.String(), t.Null()]),
  published_at: t.Union([DateTime, t.Null()], { description: "null while the target is not published." }),
  metrics_status: MetricsStatus,
  views: Count,
  likes: Count,
  comments: Count,
  shares: Count,
  saves: Count,
  engagement_rate: Ratio,
  last_updated: t.Union([DateTime, t.Null()], {
    description: "When the numbers were read from the platform; null when it returned none.",
  }),
});

export const PostTargetAnalytics = t.Object(
  {
    id: t.String(),
    media_url: t.Union([t.String(), t.Null()]),
    targets: t.Array(PostTargetAnalyticsEntry),
  },
  { title: "PostTargetAnalytics" },
);
export type PostTargetAnalytics = Static<typeof PostTargetAnalytics>;

export const RefreshResult = t.Object({
  requested_at: DateTime,
  refreshing: t.Boolean(),
});
