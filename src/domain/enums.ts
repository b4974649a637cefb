/**
 * The closed value lists stored in text columns and shown by the API: declared once here, so the
 * drizzle column types (src/db/schema.ts) and the TypeBox models cannot disagree.
 */
export const ACCOUNT_STATUSES = ["active", "auth_required", "disconnected"] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** Where a post came from: the dashboard, the API, or a workflow copying a source account. */
export const POST_ORIGINS = ["ui", "api", "workflow"] as const;
export type PostOrigin = (typeof POST_ORIGINS)[number];

/**
 * A target's first comment: waiting (its post is not published yet), pending (due), processing (being
 * posted under a lease), published, failed, or unknown (the attempt may have created it; never retried blindly).
 */
export const FIRST_COMMENT_STATUSES = ["waiting", "pending", "processing", "published", "failed", "unknown"] as const;
export type FirstCommentStatus = (typeof FIRST_COMMENT_STATUSES)[number];

export const DRAFT_STATUSES = ["inbox", "ready", "scheduled", "archived"] as const;
export type DraftStatus = (typeof DRAFT_STATUSES)[number];
/** A draft becomes scheduled only by being published as a post, never by an edit. */
export const EDITABLE_DRAFT_STATUSES = ["inbox", "ready", "archived"] as const satisfies readonly DraftStatus[];

/**
 * A media's upload: `invalid` when its bytes were not the declared type, `unreadable` when they were but
 * sharp or ffprobe could not read them; the bytes of both were discarded.
 */
export const MEDIA_STATUSES = ["pending", "uploaded", "invalid", "unreadable"] as const;
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

/**
 * A recurring post's series: active while it makes occurrences, ended when its rule gave its last one
 * (COUNT, UNTIL), cancelled by DELETE /v1/series/{id}.
 */
export const SERIES_STATUSES = ["active", "ended", "cancelled"] as const;
export type SeriesStatus = (typeof SERIES_STATUSES)[number];
