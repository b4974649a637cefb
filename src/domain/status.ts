/**
 * The aggregate status of a post, derived from its targets and nothing else (docs/architecture.md,
 * "The engine's rules").
 * It is never stored: storing it would let it drift from the targets. The SQL twin used to filter lists
 * (src/modules/posts/status-sql.ts) is checked against this function by tests/domain/status.test.ts.
 */
export const TARGET_STATUSES = [
  "pending",
  "scheduled",
  "processing",
  "submitted",
  "published",
  "failed",
  "skipped",
  "cancelled",
] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];

export const POST_STATUSES = [
  "queued",
  "scheduled",
  "processing",
  "partial",
  "published",
  "failed",
  "cancelled",
] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

const WAITING = new Set<TargetStatus>(["pending", "scheduled"]);
const ACTIVE = new Set<TargetStatus>(["processing", "submitted"]);

/**
 * - all cancelled (or no targets) → cancelled
 * - cancelled targets are otherwise ignored: cancelling one destination does not change what the rest says
 * - any processing or submitted, or some finished while others still wait → processing
 * - all waiting → queued when any is due now (pending), else scheduled
 * - all finished → published when every one was published, failed when none was, else partial
 *   (skipped counts as not published: a thread item that could not go out)
 */
export function postStatus(targets: readonly TargetStatus[]): PostStatus {
  const live = targets.filter((s) => s !== "cancelled");
  if (live.length === 0) return "cancelled";
  if (live.some((s) => ACTIVE.has(s))) return "processing";
  const waiting = live.filter((s) => WAITING.has(s));
  if (waiting.length === live.length) return waiting.some((s) => s === "pending") ? "queued" : "scheduled";
  if (waiting.length > 0) return "processing";
  const published = live.filter((s) => s === "published").length;
  if (published === live.length) return "published";
  return published === 0 ? "failed" : "partial";
}

export const isTerminal = (s: TargetStatus) =>
  s === "published" || s === "failed" || s === "skipped" || s === "cancelled";
