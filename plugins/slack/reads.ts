/**
 * What Crier reads of a connected channel: its recent messages (a workflow source), the reactions and
 * replies of a message (metrics), its member count (the audience), and the token's scopes (accounts check).
 */
import { findComment, oldestOf } from "../../src/platform/find-comment.ts";
import type {
  CommentJob,
  FindResult,
  AccountCheck,
  AccountStats,
  PluginContext,
  PostMetrics,
  RecentMedia,
  RecentPost,
} from "../../src/platform/sdk.ts";
import {
  call,
  channelOf,
  permalink,
  tokenOf,
  type ConversationsHistoryResponse,
  type ConversationsInfoResponse,
  type ConversationsRepliesResponse,
} from "./api.ts";

const kindOfFile = (f: { mimetype?: string }): "image" | "video" | null =>
  f.mimetype?.startsWith("image/") ? "image" : f.mimetype?.startsWith("video/") ? "video" : null;

/**
 * The channel's recent top-level messages (conversations.history, newest first; channels:history or
 * groups:history). Files are Slack's private URLs, readable only with the token: never downloadable.
 */
export async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await call<ConversationsHistoryResponse>(ctx.http, tokenOf(ctx), "conversations.history", {
    form: {
      channel: channelOf(ctx),
      limit: "100",
      ...(since && { oldest: (since.getTime() / 1000).toFixed(6) }),
    },
  });
  if (!res.ok) throw new Error(`Slack conversations.history: ${res.outcome.reason}`);
  const posts: RecentPost[] = [];
  for (const m of res.body.messages ?? []) {
    // Joins, topic changes and the like are not posts; a reply inside a thread is not one either.
    if (m.type !== "message" || (m.subtype && m.subtype !== "file_share" && m.subtype !== "bot_message")) continue;
    if (!m.ts || (m.thread_ts && m.thread_ts !== m.ts)) continue;
    const ts = m.ts;
    const media: RecentMedia[] = [];
    for (const f of m.files ?? []) {
      const kind = kindOfFile(f);
      if (kind && f.url_private) media.push({ url: f.url_private, type: kind, downloadable: false });
    }
    posts.push({
      platformPostId: ts,
      url: permalink(ctx, ts),
      content: m.text ?? "",
      media,
      createdAt: new Date(Number(ts) * 1000),
      kind: media.some((x) => x.type === "video") ? "video" : media.length ? "image" : "text",
    });
  }
  return posts;
}

/**
 * Reactions (every emoji, summed) as likes and the thread's replies as comments, both from the message
 * itself: conversations.history bounded to its ts (latest = oldest = ts, inclusive) lists it with its
 * `reactions` and `reply_count`, one call per message under the history scope fetchRecent needs anyway.
 * (reactions.get would need reactions:read and its message carries no reply_count in the contract.)
 */
export async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const ts of ids) {
    const res = await call<ConversationsHistoryResponse>(ctx.http, tokenOf(ctx), "conversations.history", {
      form: { channel: channelOf(ctx), latest: ts, oldest: ts, inclusive: "true", limit: "1" },
    });
    if (!res.ok) throw new Error(`Slack conversations.history ${ts}: ${res.outcome.reason}`);
    const m = res.body.messages?.find((x) => x.ts === ts);
    // A message deleted in Slack has no numbers any more.
    if (!m) continue;
    out[ts] = {
      views: null,
      likes: (m.reactions ?? []).reduce((n, r) => n + (r.count ?? 0), 0),
      comments: m.reply_count ?? 0,
      shares: null,
      saves: null,
    };
  }
  return out;
}

/** The channel's members (conversations.info with include_num_members). */
export async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await call<ConversationsInfoResponse>(ctx.http, tokenOf(ctx), "conversations.info", {
    form: { channel: channelOf(ctx), include_num_members: "true" },
  });
  if (!res.ok) throw new Error(`Slack conversations.info: ${res.outcome.reason}`);
  const members = res.body.channel?.num_members;
  return { followers: typeof members === "number" ? members : null };
}

/** auth.test proves the token; Slack names the token's scopes in the x-oauth-scopes header of every answer. */
export async function checkAccount(ctx: PluginContext): Promise<AccountCheck> {
  const res = await call(ctx.http, tokenOf(ctx), "auth.test", { form: {} });
  if (!res.ok) throw new Error(`Slack auth.test: ${res.outcome.reason}`);
  const header = res.headers.get("x-oauth-scopes");
  return header
    ? {
        grantedScopes: header
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      }
    : {};
}

/**
 * Whether a first comment is in the post's thread, for a comment whose outcome is unknown: the thread's
 * messages from the window on (conversations.replies, oldest first, the parent itself first), the bot's own
 * compared by text.
 */
export function findReply(
  ctx: PluginContext,
  job: CommentJob,
  window: { since: Date; until: Date },
): Promise<FindResult> {
  const parent = job.parent.platformPostId;
  return findComment(job, window, "reply(ies) of the app in the thread", async () => {
    const res = await call<ConversationsRepliesResponse>(ctx.http, tokenOf(ctx), "conversations.replies", {
      form: { channel: channelOf(ctx), ts: parent, limit: "200" },
    });
    if (!res.ok) throw new Error(res.outcome.reason);
    const replies = (res.body.messages ?? []).filter((m) => m.ts && m.ts !== parent);
    const at = (ts: string) => new Date(Number(ts) * 1000);
    return {
      comments: replies
        .filter((m) => m.user === ctx.account.metadata.bot_user_id)
        .map((m) => ({ id: m.ts!, url: permalink(ctx, m.ts!, parent), text: m.text ?? "", createdAt: at(m.ts!) })),
      more: res.body.has_more === true,
      oldest: oldestOf(replies.map((m) => at(m.ts!))),
    };
  });
}
