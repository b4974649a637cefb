import { sql } from "drizzle-orm";
import {
  ACCOUNT_STATUSES,
  DRAFT_STATUSES,
  FIRST_COMMENT_STATUSES,
  MEDIA_STATUSES,
  POST_ORIGINS,
  SERIES_STATUSES,
} from "../domain/enums.ts";
import { TARGET_STATUSES } from "../domain/status.ts";
import { newRowId } from "./ids.ts";
import {
  pgTable,
  uuid,
  text,
  boolean,
  integer,
  bigint,
  bigserial,
  jsonb,
  timestamp,
  primaryKey,
  index,
  uniqueIndex,
  doublePrecision,
  check,
} from "drizzle-orm/pg-core";
import type { MediaFacts } from "../domain/media-facts.ts";
import type { MetricsStatus } from "../domain/metrics-status.ts";
import { DELIVERY_STATUSES } from "../domain/webhook-events.ts";

// Millisecond precision everywhere: API cursors and expected_updated_at travel as ISO strings with
// milliseconds, so the stored value must round-trip exactly.
const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: "date" });
const createdAt = () =>
  ts("created_at")
    .notNull()
    .default(sql`now()`);
const updatedAt = () =>
  ts("updated_at")
    .notNull()
    .default(sql`now()`);

export const profiles = pgTable("profiles", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  sandbox: boolean("sandbox").notNull().default(false),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Public, shown in lists: the token's first characters. */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole token; the token itself is never stored. */
    hash: text("hash").notNull(),
    scopes: jsonb("scopes").$type<string[]>().notNull(),
    expiresAt: ts("expires_at"),
    revokedAt: ts("revoked_at"),
    lastUsedAt: ts("last_used_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.hash), index("api_keys_profile_idx").on(t.profileId)],
);

export const accounts = pgTable(
  "accounts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    platform: text("platform").notNull(),
    /** The platform's own id of the account (DID, chat id, user id): reconnecting matches on it. */
    remoteId: text("remote_id").notNull(),
    username: text("username").notNull(),
    avatarUrl: text("avatar_url"),
    status: text("status", { enum: ACCOUNT_STATUSES }).notNull().default("active"),
    /** AES-256-GCM ciphertext of the provider credentials (src/db/crypto.ts); null once disconnected. */
    credentials: text("credentials"),
    /** When the stored credentials stop working without the user (src/platform/host/credential-expiry.ts). */
    credentialsExpireAt: ts("credentials_expire_at"),
    /** The token-refresh job's next attempt for this account (and its lease while one runs). */
    credentialsRefreshAfter: ts("credentials_refresh_after"),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("accounts_remote_idx").on(t.profileId, t.platform, t.remoteId),
    index("accounts_profile_idx").on(t.profileId, t.createdAt),
  ],
);

export const drafts = pgTable(
  "drafts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    content: text("content").notNull().default(""),
    candidateAngle: text("candidate_angle").notNull().default(""),
    media: jsonb("media").$type<unknown[]>().notNull().default([]),
    selectedAccountIds: jsonb("selected_account_ids").$type<string[]>().notNull().default([]),
    suggestedPlatforms: jsonb("suggested_platforms").$type<string[]>().notNull().default([]),
    sourceType: text("source_type").notNull().default("api"),
    status: text("status", { enum: DRAFT_STATUSES }).notNull().default("inbox"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("drafts_page_idx").on(t.profileId, t.updatedAt, t.id)],
);

/** One row per (profile, operation, Idempotency-Key): the body hash and the resource it created. */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    operation: text("operation").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    resourceId: uuid("resource_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.profileId, t.operation, t.key] })],
);

/** Results of MCP tool calls made with an idempotency_key on routes without Idempotency-Key of their own. */
export const mcpToolCalls = pgTable(
  "mcp_tool_calls",
  {
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    tool: text("tool").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    /** null while the first call runs. */
    result: jsonb("result").$type<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.profileId, t.tool, t.key] })],
);

export const media = pgTable(
  "media",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    filename: text("filename").notNull(),
    contentType: text("content_type").notNull(),
    /** Storage key, also the spec's `path`. */
    path: text("path").notNull(),
    status: text("status", { enum: MEDIA_STATUSES }).notNull().default("pending"),
    sizeBytes: bigint("size_bytes", { mode: "number" }),
    maxBytes: bigint("max_bytes", { mode: "number" }).notNull(),
    width: integer("width"),
    height: integer("height"),
    durationSeconds: doublePrecision("duration_seconds"),
    /** What the file is, read once when the upload completed (src/media/probe.ts). */
    facts: jsonb("facts").$type<MediaFacts>(),
    /** A video's poster frame, stored beside it, when no cover was given (needs ffmpeg). */
    posterPath: text("poster_path"),
    expiresAt: ts("expires_at").notNull(),
    uploadedAt: ts("uploaded_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("media_pending_idx").on(t.status, t.expiresAt),
    // GET /v1/media: a profile's uploads, newest first (migration 0030).
    index("media_library_idx")
      .on(t.profileId, t.uploadedAt, t.id)
      .where(sql`status = 'uploaded'`),
  ],
);

/**
 * A media converted for a platform: one row per media and output variant (src/media/renditions.ts),
 * however many targets use it; the copy converting it holds the lease.
 */
export const mediaRenditions = pgTable(
  "media_renditions",
  {
    mediaId: uuid("media_id")
      .notNull()
      .references(() => media.id, { onDelete: "cascade" }),
    variant: text("variant").notNull(),
    status: text("status", { enum: ["pending", "ready", "failed"] })
      .notNull()
      .default("pending"),
    path: text("path"),
    contentType: text("content_type"),
    sizeBytes: bigint("size_bytes", { mode: "number" }),
    facts: jsonb("facts").$type<MediaFacts>(),
    error: text("error"),
    leaseUntil: ts("lease_until"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.mediaId, t.variant] })],
);

export const posts = pgTable(
  "posts",
  {
    id: uuid("id").primaryKey().defaultRandom().$defaultFn(newRowId), // src/db/ids.ts
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    content: text("content").notNull().default(""),
    externalId: text("external_id"),
    media: jsonb("media").$type<unknown[]>().notNull().default([]),
    origin: text("origin", { enum: POST_ORIGINS }).notNull().default("api"),
    publishAt: ts("publish_at"),
    draftId: uuid("draft_id"),
    workflowId: uuid("workflow_id"),
    /** The recurring series this post is an occurrence of (migration 0029), and which occurrence (0, 1, …). */
    seriesId: uuid("series_id").references(() => postSeries.id, { onDelete: "set null" }),
    seriesIndex: integer("series_index"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("posts_page_idx").on(t.profileId, t.updatedAt, t.id),
    uniqueIndex("posts_series_occurrence_idx").on(t.seriesId, t.seriesIndex),
  ],
);

/**
 * A recurring post (src/modules/series, src/engine/series.ts): a rule in a zone and the template every
 * occurrence is made from. template is the client's content, media and targets; plan is those targets as
 * checked against their platforms, which the engine copies into each new occurrence.
 */
export const postSeries = pgTable(
  "post_series",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    rule: text("rule").notNull(),
    timeZone: text("time_zone").notNull(),
    startsAt: ts("starts_at").notNull(),
    template: jsonb("template").$type<SeriesTemplate>().notNull(),
    plan: jsonb("plan").$type<SeriesPlanTarget[]>().notNull(),
    lenient: boolean("lenient").notNull().default(false),
    status: text("status", { enum: SERIES_STATUSES }).notNull().default("active"),
    occurrencesCreated: integer("occurrences_created").notNull().default(0),
    lastOccurrenceAt: ts("last_occurrence_at"),
    /** Why the engine could not make the last occurrence (null once it could). */
    lastError: text("last_error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("post_series_page_idx").on(t.profileId, t.updatedAt, t.id),
    index("post_series_active_idx")
      .on(t.updatedAt)
      .where(sql`status = 'active'`),
  ],
);

/**
 * What the client sent for every occurrence (the create body minus repeat and publish_at); media as a
 * post stores them (normalized, Crier's own uploads described).
 */
export interface SeriesTemplate {
  content: string;
  media: unknown[];
  targets: {
    account_id: string;
    content_override?: string | null;
    platform_options?: Record<string, unknown> | null;
  }[];
}

/** One target of an occurrence as checked, in the JSON form post-insert.ts reads. */
export interface SeriesPlanTarget {
  account_id: string;
  platform: string;
  target_variant: string | null;
  position: number;
  content_override: string | null;
  platform_options: Record<string, unknown> | null;
  fitted_content: string | null;
  fitted_media: unknown[] | null;
  adjustments: { code: string; message: string }[] | null;
}

export const postTargets = pgTable(
  "post_targets",
  {
    id: uuid("id").primaryKey().defaultRandom().$defaultFn(newRowId), // src/db/ids.ts
    postId: uuid("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    accountId: uuid("account_id").references(() => accounts.id, { onDelete: "set null" }),
    platform: text("platform").notNull(),
    targetVariant: text("target_variant"),
    /** Order inside the post: threads publish in this order. */
    position: integer("position").notNull().default(0),
    contentOverride: text("content_override"),
    platformOptions: jsonb("platform_options").$type<Record<string, unknown> | null>(),
    /** Lenient handling: the text and media the platform gets when they differ from the post's; null otherwise. */
    fittedContent: text("fitted_content"),
    fittedMedia: jsonb("fitted_media").$type<unknown[] | null>(),
    /** What lenient handling changed ({code, message}); null for a target checked strictly. */
    adjustments: jsonb("adjustments").$type<{ code: string; message: string }[] | null>(),
    status: text("status", { enum: TARGET_STATUSES }).notNull(),
    error: text("error"),
    errorCode: text("error_code"),
    platformPostId: text("platform_post_id"),
    platformPostUrl: text("platform_post_url"),
    scheduledTime: ts("scheduled_time"),
    /** When the engine may next pick the target up (backoff moves it; scheduled_time stays what the user asked). */
    dueAt: ts("due_at"),
    attempts: integer("attempts").notNull().default(0),
    leaseUntil: ts("lease_until"),
    claimedBy: text("claimed_by"),
    submittedHandle: text("submitted_handle"),
    submitDeadline: ts("submit_deadline"),
    publishedAt: ts("published_at"),
    /**
     * An unknown outcome the reconciler (src/engine/reconcile.ts) asks the platform about at this time;
     * null when there is nothing to settle. since/until: when the attempt ran (where to look for the post).
     */
    reconcileAt: ts("reconcile_at"),
    reconcileSince: ts("reconcile_since"),
    reconcileUntil: ts("reconcile_until"),
    /** The one retry a proven absence allows was spent. */
    reconcileRetried: boolean("reconcile_retried").notNull().default(false),
    /** The posting-queue slot this target was given (src/modules/queues); null unless queued. */
    queueSlot: ts("queue_slot"),
    /**
     * The target's first comment (migrations/0027_first_comment.sql, src/engine/first-comment.ts): its
     * text and state (null: none; waiting, pending, processing, published, failed, unknown), what the
     * platform answered, and the engine's bookkeeping (attempts, when it is due or reconciled, its lease,
     * the last attempt's window, whether the one retry a proven absence allows was spent).
     */
    firstComment: text("first_comment"),
    firstCommentStatus: text("first_comment_status", { enum: FIRST_COMMENT_STATUSES }),
    firstCommentId: text("first_comment_id"),
    firstCommentUrl: text("first_comment_url"),
    firstCommentError: text("first_comment_error"),
    firstCommentErrorCode: text("first_comment_error_code"),
    firstCommentAttempts: integer("first_comment_attempts").notNull().default(0),
    firstCommentDueAt: ts("first_comment_due_at"),
    firstCommentLeaseUntil: ts("first_comment_lease_until"),
    firstCommentClaimedBy: text("first_comment_claimed_by"),
    firstCommentSince: ts("first_comment_since"),
    firstCommentUntil: ts("first_comment_until"),
    firstCommentRetried: boolean("first_comment_retried").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("post_targets_reconcile_idx")
      .on(t.reconcileAt)
      .where(sql`reconcile_at is not null`),
    index("post_targets_post_idx").on(t.postId, t.position),
    index("post_targets_first_comment_due_idx")
      .on(t.firstCommentDueAt)
      .where(sql`first_comment_status in ('pending', 'processing', 'unknown')`),
    index("post_targets_due_idx").on(t.status, t.dueAt),
    // The engine's claim reads waiting targets oldest due first; this keeps that an ordered index scan.
    index("post_targets_waiting_idx")
      .on(t.dueAt)
      .where(sql`status in ('pending', 'scheduled')`),
    // ...and per platform, the window a claim takes its accounts from (migration 0034).
    index("post_targets_waiting_platform_idx")
      .on(t.platform, t.dueAt)
      .where(sql`(status || '') in ('pending', 'scheduled')`),
    // ...and per account, its next waiting target (one publish per account at a time).
    index("post_targets_waiting_account_idx")
      .on(t.accountId, t.dueAt, t.position)
      .where(sql`status in ('pending', 'scheduled')`),
    index("post_targets_account_idx").on(t.accountId, t.status),
    // The claim's look for an account publishing already (crier_claim; migration 0032 says why the
    // predicate is an expression).
    index("post_targets_processing_account_idx")
      .on(t.accountId)
      .where(sql`(status || '') = 'processing'`),
    // Housekeeping's look for thread replies whose earlier item failed reads only waiting replies.
    index("post_targets_waiting_reply_idx")
      .on(t.dueAt)
      .where(sql`status in ('pending', 'scheduled') and position > 0`),
    // ...and its look for due targets whose account was deleted.
    index("post_targets_waiting_orphan_idx")
      .on(t.dueAt)
      .where(sql`status in ('pending', 'scheduled') and account_id is null`),
    // Analytics' look for targets published since its last pass (src/engine/analytics-track.ts; an
    // expression for the reason of migration 0032).
    index("post_targets_published_idx")
      .on(t.updatedAt, t.id)
      .where(sql`(status || '') = 'published'`),
  ],
);

/** An account's posting queue: weekly wall-clock slots ({day, time}) in an IANA time zone. */
export const accountQueues = pgTable("account_queues", {
  accountId: uuid("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  profileId: uuid("profile_id")
    .notNull()
    .references(() => profiles.id, { onDelete: "cascade" }),
  timeZone: text("time_zone").notNull(),
  slots: jsonb("slots").$type<{ day: string; time: string }[]>().notNull().default([]),
  updatedAt: updatedAt(),
});

/**
 * The queue slots taken, one per post and account (a thread's items and a post's variants on one account
 * share it): the primary key keeps two posts off one slot across every copy.
 */
export const queueSlots = pgTable(
  "queue_slots",
  {
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    slotAt: ts("slot_at").notNull(),
    /** DEFERRABLE INITIALLY DEFERRED in the migration: a create takes its slots before inserting the post. */
    postId: uuid("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.slotAt] }),
    uniqueIndex("queue_slots_post_idx").on(t.postId, t.accountId),
  ],
);

const count = (name: string) => bigint(name, { mode: "number" });

/**
 * Every published item whose numbers are read: a published target (post_id/target_id set) or a post made
 * on the platform itself (found by fetchRecent). The latest numbers live here; every reading is also kept
 * in metric_snapshots.
 */
export const analyticsItems = pgTable(
  "analytics_items",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    platform: text("platform").notNull(),
    platformPostId: text("platform_post_id").notNull(),
    targetId: uuid("target_id").references(() => postTargets.id, { onDelete: "set null" }),
    postId: uuid("post_id").references(() => posts.id, { onDelete: "set null" }),
    url: text("url"),
    caption: text("caption").notNull().default(""),
    mediaType: text("media_type").$type<"video" | "photo">().notNull().default("photo"),
    thumbnailUrl: text("thumbnail_url"),
    mediaUrl: text("media_url"),
    publishedAt: ts("published_at").notNull(),
    views: count("views"),
    likes: count("likes"),
    comments: count("comments"),
    shares: count("shares"),
    saves: count("saves"),
    metricsStatus: text("metrics_status").$type<MetricsStatus>().notNull().default("ok"),
    lastUpdated: ts("last_updated"),
    nextReadAt: ts("next_read_at").notNull(),
    leaseUntil: ts("lease_until"),
    claimedBy: text("claimed_by"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("analytics_items_remote_idx").on(t.accountId, t.platformPostId),
    uniqueIndex("analytics_items_target_idx").on(t.targetId),
    index("analytics_items_due_idx").on(t.nextReadAt),
    index("analytics_items_profile_idx").on(t.profileId, t.publishedAt),
    // A deleted post sets its items' reference to null: found through this, not a scan.
    index("analytics_items_post_idx").on(t.postId),
  ],
);

export const metricSnapshots = pgTable(
  "metric_snapshots",
  {
    itemId: uuid("item_id")
      .notNull()
      .references(() => analyticsItems.id, { onDelete: "cascade" }),
    observedAt: ts("observed_at").notNull(),
    views: count("views"),
    likes: count("likes"),
    comments: count("comments"),
    shares: count("shares"),
    saves: count("saves"),
  },
  (t) => [primaryKey({ columns: [t.itemId, t.observedAt] })],
);

/** Per account: its audience and when it is read next, what the last read said, and its lease. */
export const accountAnalytics = pgTable(
  "account_analytics",
  {
    accountId: uuid("account_id")
      .primaryKey()
      .references(() => accounts.id, { onDelete: "cascade" }),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    followers: count("followers"),
    followersObservedAt: ts("followers_observed_at"),
    metricsStatus: text("metrics_status").$type<MetricsStatus>().notNull().default("ok"),
    nextStatsAt: ts("next_stats_at").notNull(),
    nextNativeAt: ts("next_native_at").notNull(),
    leaseUntil: ts("lease_until"),
    claimedBy: text("claimed_by"),
  },
  (t) => [index("account_analytics_profile_idx").on(t.profileId)],
);

export const followerSnapshots = pgTable(
  "follower_snapshots",
  {
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    observedAt: ts("observed_at").notNull(),
    followers: count("followers").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.observedAt] })],
);

/** The last refresh a profile asked for (POST /v1/analytics/refresh is rate-limited per profile). */
export const analyticsRefreshes = pgTable("analytics_refreshes", {
  profileId: uuid("profile_id")
    .primaryKey()
    .references(() => profiles.id, { onDelete: "cascade" }),
  requestedAt: ts("requested_at").notNull(),
});

/**
 * How far analytics' tracking of published targets has got (src/engine/analytics-track.ts), one row for
 * every copy: when the last pass began, when the last full pass began and where the one under way got to.
 */
export const analyticsTracking = pgTable(
  "analytics_tracking",
  {
    id: integer("id").primaryKey(),
    windowBegan: ts("window_began").notNull(),
    fullAt: ts("full_at").notNull(),
    fullFrom: uuid("full_from"),
  },
  () => [check("analytics_tracking_id_check", sql`id = 1`)],
);

/**
 * Periodic engine jobs (src/engine/jobs.ts), one row per job: across every copy sharing the database a
 * job runs at most once per period and never twice at once. A copy that dies mid-run holds the lease
 * until lease_until, then any copy may take the job again.
 */
export const engineJobs = pgTable("engine_jobs", {
  name: text("name").primaryKey(),
  nextRunAt: ts("next_run_at").notNull(),
  leaseUntil: ts("lease_until"),
  heldBy: text("held_by"),
});

/**
 * What the sandbox emulators hold (src/modules/sandbox/state-store.ts), one document per sandbox profile
 * and platform, so a sandbox survives restarts, every copy sees the same accounts, tokens and posts, and
 * no profile sees another's. `version` rises with each save; a copy saves only over the version it read.
 */
export const sandboxState = pgTable(
  "sandbox_state",
  {
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    platform: text("platform").notNull(),
    version: bigint("version", { mode: "number" }).notNull(),
    state: text("state").notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.profileId, t.platform] })],
);

/** Per-profile limits set by the operator (`crier profiles set-limits`); null means unlimited. */
export const profileLimits = pgTable("profile_limits", {
  profileId: uuid("profile_id")
    .primaryKey()
    .references(() => profiles.id, { onDelete: "cascade" }),
  workflows: integer("workflows"),
  accounts: integer("accounts"),
  updatedAt: updatedAt(),
});

export const workflows = pgTable(
  "workflows",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    sourceAccountId: uuid("source_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountIds: jsonb("target_account_ids").$type<string[]>().notNull(),
    settings: jsonb("settings").$type<Record<string, unknown>>().notNull(),
    isActive: boolean("is_active").notNull(),
    futureContentEnabled: boolean("future_content_enabled").notNull().default(true),
    lastChecked: ts("last_checked"),
    lastEnabledAt: ts("last_enabled_at"),
    /** When the engine polls the source next; a poll holds lease_until so one copy polls at a time. */
    pollDueAt: ts("poll_due_at"),
    leaseUntil: ts("lease_until"),
    claimedBy: text("claimed_by"),
    /** Why the last poll failed (null after a successful one). */
    lastError: text("last_error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("workflows_page_idx").on(t.profileId, t.updatedAt, t.id),
    index("workflows_poll_idx")
      .on(t.pollDueAt)
      .where(sql`is_active and future_content_enabled`),
  ],
);

/** One source post a workflow took: unique per workflow, so no poll, restart or copy takes it twice. */
export const workflowSources = pgTable(
  "workflow_sources",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    workflowId: uuid("workflow_id")
      .notNull()
      .references(() => workflows.id, { onDelete: "cascade" }),
    sourceItemId: text("source_item_id").notNull(),
    sourceUrl: text("source_url"),
    kind: text("kind").notNull(),
    content: text("content").notNull(),
    publishedAt: ts("published_at").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("workflow_sources_item_idx").on(t.workflowId, t.sourceItemId),
    index("workflow_sources_page_idx").on(t.workflowId, t.updatedAt, t.id),
  ],
);

/** What became of one source post for one destination: queued (with its slot), skipped, posted or failed. */
export const workflowItems = pgTable(
  "workflow_items",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    sourceId: uuid("source_id")
      .notNull()
      .references(() => workflowSources.id, { onDelete: "cascade" }),
    workflowId: uuid("workflow_id")
      .notNull()
      .references(() => workflows.id, { onDelete: "cascade" }),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    status: text("status").$type<"queued" | "skipped" | "posted" | "failed">().notNull(),
    reason: text("reason"),
    reasonCode: text("reason_code"),
    slotAt: ts("slot_at"),
    caption: text("caption"),
    media: jsonb("media").$type<unknown[]>().notNull().default([]),
    platformOptions: jsonb("platform_options").$type<Record<string, unknown> | null>(),
    postId: uuid("post_id").references(() => posts.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("workflow_items_dest_idx").on(t.sourceId, t.accountId),
    index("workflow_items_due_idx")
      .on(t.slotAt)
      .where(sql`status = 'queued'`),
    index("workflow_items_slots_idx").on(t.workflowId, t.accountId, t.slotAt),
  ],
);

/** Dashboard users: created by `crier users create`; the password is set through a one-time link. */
export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** Stored lower-cased: one user per address whatever its spelling. */
    email: text("email").notNull(),
    /** Bun.password (argon2id); null until the user has followed a sign-in link. */
    passwordHash: text("password_hash"),
    /** May add profiles from the dashboard; an operator's grant (crier users set), off by default. */
    canCreateProfiles: boolean("can_create_profiles").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email)],
);

/** The profiles a user may work in (several, with a switcher in the dashboard). */
export const userProfiles = pgTable(
  "user_profiles",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.profileId] })],
);

/** One-time links on which a user sets a password (first sign-in or reset); only the hash is stored. */
export const signInLinks = pgTable(
  "sign_in_links",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("sign_in_links_token_idx").on(t.tokenHash)],
);

/** Dashboard sessions, in the database so any running copy serves any signed-in user. */
export const sessions = pgTable(
  "sessions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The profile the user is working in now (the switcher changes it). */
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    /** SHA-256 of the cookie value; the cookie itself is never stored. */
    tokenHash: text("token_hash").notNull(),
    /** Sent back by the page in X-CSRF-Token on every call; a cross-site page cannot read it. */
    csrfToken: text("csrf_token").notNull(),
    expiresAt: ts("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("sessions_token_idx").on(t.tokenHash), index("sessions_user_idx").on(t.userId)],
);

/**
 * Nonces of connect states already used (src/modules/connect/used-states.ts), kept until the state would
 * have expired: a state connects once, whichever copy answers its callback.
 */
export const connectStatesUsed = pgTable(
  "connect_states_used",
  {
    nonce: text("nonce").primaryKey(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [index("connect_states_used_expires_idx").on(t.expiresAt)],
);

/** A receiver of webhooks; `secrets` is the AES-GCM ciphertext (src/db/crypto.ts) of the signing secrets. */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    profileId: uuid("profile_id")
      .notNull()
      .references(() => profiles.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events").array().notNull(),
    description: text("description"),
    isActive: boolean("is_active").notNull().default(true),
    secrets: text("secrets").notNull(),
    disabledReason: text("disabled_reason"),
    disabledAt: ts("disabled_at"),
    failingSince: ts("failing_since"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("webhook_endpoints_profile_idx").on(t.profileId, t.updatedAt, t.id)],
);

/** The outbox: written by the webhook triggers (migrations/functions/crier_webhook_emit.sql) in the transaction of the change. */
export const webhookEvents = pgTable("webhook_events", {
  id: uuid("id").primaryKey().defaultRandom(),
  profileId: uuid("profile_id")
    .notNull()
    .references(() => profiles.id, { onDelete: "cascade" }),
  type: text("type").notNull(),
  payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
  createdAt: createdAt(),
});

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    seq: bigserial("seq", { mode: "number" }).notNull(),
    eventId: uuid("event_id")
      .notNull()
      .references(() => webhookEvents.id, { onDelete: "cascade" }),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    profileId: uuid("profile_id").notNull(),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at"),
    leaseUntil: ts("lease_until"),
    claimedBy: text("claimed_by"),
    lastStatusCode: integer("last_status_code"),
    deliveredAt: ts("delivered_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("webhook_deliveries_pending_idx")
      .on(t.seq)
      .where(sql`status = 'pending'`),
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.seq),
  ],
);

export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    deliveryId: uuid("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attemptedAt: ts("attempted_at").notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    responseExcerpt: text("response_excerpt"),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attemptedAt)],
);

/** The last aggregate post status webhooks were told about (post.* events fire on a change of it). */
export const webhookPostStates = pgTable("webhook_post_states", {
  postId: uuid("post_id")
    .primaryKey()
    .references(() => posts.id, { onDelete: "cascade" }),
  status: text("status").notNull(),
});
