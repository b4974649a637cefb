/**
 * What Crier reads of a Mastodon account: its statuses (a workflow source: GET
 * /api/v1/accounts/:id/statuses), each status's counts (favourites, reblogs, replies: GET
 * /api/v1/statuses/:id), its followers (GET /api/v1/accounts/verify_credentials), and a reply's place
 * under its parent (GET /api/v1/statuses/:id/context) for unknown outcomes (docs.joinmastodon.org/methods/
 * accounts/, /methods/statuses/; read 2026-11-26). Mastodon gives a status's text as HTML only.
 */
import { findAmongRecent, normalise, WINDOW_SLACK_MS } from "../../src/platform/find-published.ts";
import { bearerAuth } from "../../src/platform/oauth.ts";
import type {
  AccountStats,
  FindQuery,
  FindResult,
  PluginContext,
  PostMetrics,
  RecentMedia,
  RecentPost,
} from "../../src/platform/sdk.ts";
import type { AccountEntity, ContextEntity, StatusEntity } from "./contract.ts";
import { accountBase } from "./server.ts";

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'", nbsp: " " };

/** A status's HTML content as the text that was posted: paragraphs and line breaks back to newlines. */
export function plainText(html: string): string {
  return html
    .replace(/<\/p>\s*<p[^>]*>/gi, "\n\n")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) => {
      if (ENTITIES[e.toLowerCase()] !== undefined) return ENTITIES[e.toLowerCase()];
      const code = e.startsWith("#x") ? parseInt(e.slice(2), 16) : e.startsWith("#") ? parseInt(e.slice(1), 10) : NaN;
      return Number.isFinite(code) ? String.fromCodePoint(code) : m;
    });
}

const fail = (what: string, reason: string) => new Error(`Mastodon ${what} could not be read: ${reason}`);

const accountId = (ctx: PluginContext) => encodeURIComponent(String(ctx.account.metadata.account_id ?? ""));

function recentOf(s: StatusEntity): RecentPost {
  const media: RecentMedia[] = (s.media_attachments ?? [])
    .filter((m) => m.type === "image" || m.type === "video" || m.type === "gifv")
    .map((m) => ({
      url: String(m.url ?? m.remote_url ?? m.preview_url),
      type: m.type === "image" ? "image" : "video",
      ...(m.description && { alt_text: m.description }),
      downloadable: Boolean(m.url ?? m.remote_url),
    }));
  return {
    platformPostId: String(s.id),
    url: s.url ?? s.uri ?? null,
    content: plainText(s.content ?? ""),
    media,
    createdAt: new Date(s.created_at),
    kind: media.some((m) => m.type === "video") ? "video" : media.length ? "image" : "text",
  };
}

/** The account's own statuses, newest first: no reblogs, no replies to others (a thread's replies to itself stay). */
export async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<StatusEntity[]>(
    "GET",
    `${accountBase(ctx)}/api/v1/accounts/${accountId(ctx)}/statuses`,
    { query: { limit: 40, exclude_reblogs: true, exclude_replies: true }, headers: bearerAuth(ctx) },
  );
  if (!res.ok) throw fail("statuses", res.outcome.reason);
  return res.body.map(recentOf).filter((p) => !since || p.createdAt >= since);
}

export async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const res = await ctx.http.request<StatusEntity>(
      "GET",
      `${accountBase(ctx)}/api/v1/statuses/${encodeURIComponent(id)}`,
      {
        headers: bearerAuth(ctx),
      },
    );
    // A deleted status has no numbers any more; the others still do.
    if (!res.ok && res.status === 404) continue;
    if (!res.ok) throw fail("status counts", res.outcome.reason);
    out[id] = {
      views: null,
      likes: res.body.favourites_count,
      comments: res.body.replies_count,
      shares: res.body.reblogs_count,
      saves: null,
    };
  }
  return out;
}

export async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<AccountEntity>("GET", `${accountBase(ctx)}/api/v1/accounts/verify_credentials`, {
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw fail("account", res.outcome.reason);
  return { followers: res.body.followers_count };
}

/**
 * Whether a status exists after an unknown outcome: a thread item among the replies under its parent
 * (the context's descendants, by this account), anything else among the account's statuses.
 */
export async function findPublished(ctx: PluginContext, q: FindQuery): Promise<FindResult> {
  if (!q.replyTo) return findAmongRecent(ctx, q, fetchRecent);
  const res = await ctx.http.request<ContextEntity>(
    "GET",
    `${accountBase(ctx)}/api/v1/statuses/${encodeURIComponent(q.replyTo)}/context`,
    { headers: bearerAuth(ctx) },
  );
  if (!res.ok) return { kind: "cannot_tell", reason: `the replies could not be read: ${res.outcome.reason}` };
  const from = q.since.getTime() - WINDOW_SLACK_MS;
  const to = q.until.getTime() + WINDOW_SLACK_MS;
  const mine = res.body.descendants.filter(
    (s) =>
      s.in_reply_to_id === q.replyTo &&
      String(s.account?.id) === String(ctx.account.metadata.account_id) &&
      Date.parse(s.created_at) >= from &&
      Date.parse(s.created_at) <= to,
  );
  const same = mine.filter((s) => normalise(plainText(s.content ?? "")) === normalise(q.content));
  if (same.length > 1)
    return { kind: "cannot_tell", reason: `${same.length} replies with the same text in the window` };
  if (same[0]) return { kind: "found", platformPostId: String(same[0].id), url: same[0].url ?? null };
  return {
    kind: "absent",
    checked: `${mine.length} repl(ies) of the account under ${q.replyTo} in the window, none with this text`,
  };
}
