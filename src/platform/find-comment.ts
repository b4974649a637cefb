/**
 * Looking for a first comment whose attempt had an unknown outcome, among the comments a platform lists
 * under the parent post: by this account, with the same text, made inside the attempt's window (with the
 * same slack and text normalising as find-published.ts). The plugin lists and filters by author; this
 * decides found, absent or cannot_tell the same way for every platform.
 */
import type { CommentJob, FindResult } from "./sdk.ts";
import { normalise, WINDOW_SLACK_MS } from "./find-published.ts";

/** A comment under the parent as a plugin read it, already limited to the account's own. */
export interface ListedComment {
  id: string;
  url: string | null;
  text: string;
  createdAt: Date;
}

/**
 * What one listing call read: the account's comments under the parent, and whether the
 * platform has more (older) ones on further pages.
 */
export interface CommentListing {
  comments: ListedComment[];
  more: boolean;
  /** When the oldest comment the call listed (anyone's) was made; null when it listed none. */
  oldest: Date | null;
}

/** The earliest of the times a listing showed (whatever order the platform lists in); null for none. */
export const oldestOf = (times: Date[]): Date | null =>
  times.length ? new Date(Math.min(...times.map((d) => d.getTime()))) : null;

/**
 * Reads the account's comments under the parent (`list` throws when the platform cannot be asked) and
 * looks for the job's text in the window. `what` names what was read, for the absent answer. A listing
 * with more pages proves absence only when it already reaches back past the window.
 */
export async function findComment(
  job: CommentJob,
  window: { since: Date; until: Date },
  what: string,
  list: () => Promise<CommentListing>,
): Promise<FindResult> {
  let listing: CommentListing;
  try {
    listing = await list();
  } catch (e) {
    return { kind: "cannot_tell", reason: `the comments under the post could not be read: ${(e as Error)?.message}` };
  }
  const from = new Date(window.since.getTime() - WINDOW_SLACK_MS);
  const to = new Date(window.until.getTime() + WINDOW_SLACK_MS);
  const text = normalise(job.text);
  const seen = listing.comments;
  const inWindow = seen.filter((c) => c.createdAt >= from && c.createdAt <= to);
  const same = inWindow.filter((c) => normalise(c.text) === text);
  if (same.length > 1)
    return { kind: "cannot_tell", reason: `${same.length} comments with the same text were made in the window` };
  if (same[0]) return { kind: "found", platformPostId: same[0].id, url: same[0].url };
  if (listing.more && !(listing.oldest && listing.oldest < from))
    return {
      kind: "cannot_tell",
      reason: "the post has more comments than one listing shows, and none before the window",
    };
  return {
    kind: "absent",
    checked: `${inWindow.length} ${what} between ${from.toISOString()} and ${to.toISOString()}, none with this text`,
  };
}
