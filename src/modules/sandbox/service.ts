/**
 * The sandbox inbox: what the emulators received for a sandbox profile's published targets, read from
 * the emulators' own state (kept in the database) and tied to the profile's accounts and posts.
 */
import { and, eq, inArray, isNotNull, type SQL } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { accounts, posts, postTargets } from "../../db/schema.ts";
import { NotFound } from "../../http/errors.ts";
import { pageOrder, pageSize, pageWhere, toPage } from "../../http/paging.ts";
import { previewImageFor } from "../../media/poster.ts";
import type { EmulatedPost } from "../../platform/sdk.ts";
import type { Delivery, DeliveryListQuery } from "./model.ts";

interface Row {
  id: string;
  postId: string;
  accountId: string;
  platform: string;
  username: string;
  remoteId: string;
  platformPostId: string;
  publishedAt: Date;
  media: unknown[];
}

/** The emulated post a target was published as; platforms whose ids repeat per chat (Telegram) also match the chat. */
function emulatedFor(byId: Map<string, EmulatedPost[]>, row: Row): EmulatedPost | undefined {
  const all = byId.get(row.platformPostId) ?? [];
  return all.find((p) => String(p.options?.chat_id ?? "") === row.remoteId) ?? all.at(-1);
}

async function emulatedByPlatform(ctx: AppContext, profileId: string, platforms: Iterable<string>) {
  const out = new Map<string, Map<string, EmulatedPost[]>>();
  for (const platform of new Set(platforms)) {
    const byId = new Map<string, EmulatedPost[]>();
    for (const p of (await ctx.platforms.loadEmulator(platform, profileId))?.posts() ?? [])
      byId.set(p.id, [...(byId.get(p.id) ?? []), p]);
    out.set(platform, byId);
  }
  return out;
}

/** Published targets of the profile's sandbox accounts, newest first, as the emulators received them. */
async function deliveries(ctx: AppContext, profileId: string, where: SQL[], limit: number) {
  const rows: Row[] = await ctx.db.db
    .select({
      id: postTargets.id,
      postId: postTargets.postId,
      accountId: accounts.id,
      platform: postTargets.platform,
      username: accounts.username,
      remoteId: accounts.remoteId,
      platformPostId: postTargets.platformPostId,
      publishedAt: postTargets.publishedAt,
      media: posts.media,
    })
    .from(postTargets)
    .innerJoin(accounts, eq(accounts.id, postTargets.accountId))
    .innerJoin(posts, eq(posts.id, postTargets.postId))
    .where(
      and(
        eq(postTargets.profileId, profileId),
        eq(postTargets.status, "published"),
        isNotNull(postTargets.platformPostId),
        isNotNull(postTargets.publishedAt),
        ...where,
      ),
    )
    .orderBy(...pageOrder({ updatedAt: postTargets.publishedAt, id: postTargets.id }))
    .limit(limit)
    .then((r) => r as Row[]);
  const emulated = await emulatedByPlatform(
    ctx,
    profileId,
    rows.map((r) => r.platform),
  );
  const received = rows.map((row) => ({ row, post: emulatedFor(emulated.get(row.platform)!, row) }));
  const parents = await parentTargets(ctx, profileId, received);
  return Promise.all(
    received.map(async ({ row, post }) => ({
      id: row.id,
      updatedAt: row.publishedAt,
      delivery: toDelivery(row, post, parents, await previews(ctx, row)),
    })),
  );
}

type PostMedia = { url?: string; thumbnail_url?: string; type?: string }[];

/** The picture of each of the post's media items (see previewImageFor); an image is its own picture. */
function previews(ctx: AppContext, row: Row): Promise<(string | null)[]> {
  return Promise.all(
    (row.media as PostMedia).map((m) =>
      m.type === "video" && m.url ? previewImageFor(ctx, { ...m, url: m.url }) : (m.thumbnail_url ?? m.url ?? null),
    ),
  );
}

/** Target ids of the posts that deliveries answer, by account and platform post id. */
async function parentTargets(ctx: AppContext, profileId: string, received: { row: Row; post?: EmulatedPost }[]) {
  const ids = [...new Set(received.flatMap(({ post }) => (post?.replyTo ? [post.replyTo] : [])))];
  const out = new Map<string, string>();
  if (!ids.length) return out;
  const rows = await ctx.db.db
    .select({ id: postTargets.id, accountId: postTargets.accountId, ppid: postTargets.platformPostId })
    .from(postTargets)
    .where(and(eq(postTargets.profileId, profileId), inArray(postTargets.platformPostId, ids)));
  for (const r of rows) out.set(`${r.accountId} ${r.ppid}`, r.id);
  return out;
}

function toDelivery(
  row: Row,
  post: EmulatedPost | undefined,
  parents: Map<string, string>,
  pictures: (string | null)[],
): Delivery {
  const postMedia = row.media as PostMedia;
  const replyTo = post?.replyTo ?? null;
  return {
    id: row.id,
    post_id: row.postId,
    account_id: row.accountId,
    platform: row.platform,
    username: row.username,
    platform_post_id: row.platformPostId,
    text: post?.text ?? "",
    media: (post?.media ?? []).map((m, i) => ({
      type: m.type,
      content_type: m.contentType ?? null,
      size: m.size ?? null,
      url: postMedia[i]?.thumbnail_url ?? postMedia[i]?.url ?? null,
      alt_text: m.alt ?? null,
      preview_url: pictures[i] ?? null,
    })),
    reply_to: replyTo === null ? null : (parents.get(`${row.accountId} ${replyTo}`) ?? null),
    reply_to_platform_post_id: replyTo,
    options: post?.options ?? {},
    received_at: (post?.createdAt ?? row.publishedAt).toISOString(),
  };
}

export async function listDeliveries(ctx: AppContext, profileId: string, q: DeliveryListQuery) {
  if (q.account_id) await ownAccount(ctx, profileId, q.account_id);
  const where = [
    ...(q.account_id ? [eq(postTargets.accountId, q.account_id)] : []),
    ...[pageWhere({ updatedAt: postTargets.publishedAt, id: postTargets.id }, q)].filter((w): w is SQL => !!w),
  ];
  // Paged by the stored published_at (as updatedAt for the shared keyset helpers), newest first.
  const { items, meta } = toPage(await deliveries(ctx, profileId, where, pageSize(q) + 1), q);
  return { data: items.map((i) => i.delivery), meta };
}

async function ownAccount(ctx: AppContext, profileId: string, accountId: string) {
  const [row] = await ctx.db.db
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(eq(accounts.id, accountId), eq(accounts.profileId, profileId)));
  if (!row) throw new NotFound("Account");
}

/** The inbox page's content: every account of the profile with its newest deliveries. */
export async function inbox(ctx: AppContext, profileId: string, limit = 200) {
  const list = await ctx.db.db
    .select({ id: accounts.id, platform: accounts.platform, username: accounts.username, status: accounts.status })
    .from(accounts)
    .where(eq(accounts.profileId, profileId))
    .orderBy(accounts.platform, accounts.username);
  const received = await deliveries(ctx, profileId, [], limit);
  return { accounts: list, deliveries: received.map((r) => r.delivery) };
}
