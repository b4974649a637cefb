/**
 * Looking for a post whose publish had an unknown outcome, in what a plugin's fetchRecent lists: same
 * text, created inside the attempt's window. Plugins whose platform can look a post up more exactly (by
 * an idempotency key) write their own findPublished instead.
 */
import type { FindQuery, FindResult, Plugin, PluginContext, RecentPost } from "./sdk.ts";

/** How to ask a plugin whether a post exists: its own findPublished, else through its fetchRecent; none without either. */
export function finderFor(plugin: Plugin): ((ctx: PluginContext, q: FindQuery) => Promise<FindResult>) | undefined {
  if (plugin.findPublished) return (ctx, q) => plugin.findPublished!(ctx, q);
  const fetchRecent = plugin.fetchRecent;
  if (fetchRecent) return (ctx, q) => findAmongRecent(ctx, q, (c, since) => fetchRecent.call(plugin, c, since));
  return undefined;
}

/** Platform clocks and ours differ a little; a post this far outside the attempt's window is another post. */
export const WINDOW_SLACK_MS = 2 * 60_000;

/** Platforms trim and normalise line ends; nothing more is assumed. */
export const normalise = (text: string) => text.replace(/\r\n/g, "\n").trim();

export async function findAmongRecent(
  ctx: PluginContext,
  q: FindQuery,
  fetchRecent: (ctx: PluginContext, since: Date | null) => Promise<RecentPost[]>,
): Promise<FindResult> {
  // Listings of an account's own posts leave replies out, so a thread item's absence would prove nothing.
  if (q.replyTo) return { kind: "cannot_tell", reason: "the account's listing does not show replies" };
  const from = new Date(q.since.getTime() - WINDOW_SLACK_MS);
  const to = new Date(q.until.getTime() + WINDOW_SLACK_MS);
  let recent: RecentPost[];
  try {
    recent = await fetchRecent(ctx, from);
  } catch (e) {
    return { kind: "cannot_tell", reason: `the account's recent posts could not be read: ${(e as Error)?.message}` };
  }
  const text = normalise(q.content);
  const inWindow = recent.filter((p) => p.createdAt >= from && p.createdAt <= to);
  const same = inWindow.filter((p) => normalise(p.content) === text);
  if (same.length > 1) {
    return { kind: "cannot_tell", reason: `${same.length} posts with the same text were made in the window` };
  }
  if (same[0]) return { kind: "found", platformPostId: same[0].platformPostId, url: same[0].url };
  return {
    kind: "absent",
    checked: `${inWindow.length} post(s) of the account between ${from.toISOString()} and ${to.toISOString()}, none with this text`,
  };
}
