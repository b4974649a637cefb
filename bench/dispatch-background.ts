// The background work of bench/dispatch.ts's regime (c): what a serving copy's other jobs read while it
// publishes. BENCH_BG_POSTS=10,000 posts already published on Bluesky (real records in the emulator, made
// through createRecord) whose numbers the analytics job reads from the emulator over HTTP, and
// BENCH_BG_WORKFLOWS=500 active workflows, each with its own Bluesky source account holding its share of
// those posts, whose polls (app.bsky.feed.getAuthorFeed through the plugin's fetchRecent) fall due during
// the lag window. The workflows were enabled after the posts were made, so a poll reads its source and
// finds nothing new to copy, as most polls do: the targets measured stay the steady 100/s.
import { sql } from "drizzle-orm";
import type { AppContext } from "../src/context.ts";
import { upsertConnectedAccount } from "../src/modules/accounts/service.ts";
import { createWorkflow } from "../src/modules/workflows/service.ts";
import { connectContext } from "../src/platform/host/provider.ts";

export const BG_POSTS = Number(process.env.BENCH_BG_POSTS ?? 10_000);
export const BG_WORKFLOWS = Number(process.env.BENCH_BG_WORKFLOWS ?? 500);

export interface Background {
  /** Called as the lag window opens: the polls fall due across it and the analytics job is due at once. */
  arm(windowStart: Date, windowSeconds: number): Promise<void>;
  /** What the background work did between from and to. */
  report(from: Date, to: Date): Promise<string>;
  /**
   * Removes the workflows (later drains poll nothing) and the analytics items, whose post_id has no index
   * of its own: the drains' delete of every post would scan them once per post.
   */
  remove(): Promise<void>;
}

/** Runs fn over items, `width` at a time. */
async function inParallel<T>(items: T[], width: number, fn: (item: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

export async function seedBackground(
  ctx: AppContext,
  emulatorUrl: string,
  profileId: string,
  destinationIds: string[],
): Promise<Background> {
  const t0 = performance.now();
  const plugin = ctx.platforms.get("bluesky")!;
  if (plugin.connect?.mode !== "credential_form_url") throw new Error("unexpected Bluesky connect flow");
  const sources: { id: string; did: string; handle: string; accessJwt: string }[] = [];
  for (let i = 0; i < BG_WORKFLOWS; i++) {
    const identity = await plugin.connect.verify(connectContext(ctx, "bluesky", { sandbox: false }), {
      handle: `source${i}.test`,
      app_password: "abcd-efgh-ijkl-mnop",
    });
    const { id } = await upsertConnectedAccount(ctx, { profileId, platform: "bluesky", ...identity });
    const c = identity.credentials as { did: string; accessJwt: string };
    sources.push({ id, did: c.did, handle: identity.username, accessJwt: c.accessJwt });
  }

  // The posts, made on the emulator as the plugin makes them, then recorded as published targets.
  const made: { source: number; uri: string }[] = [];
  await inParallel(
    Array.from({ length: BG_POSTS }, (_, i) => i),
    16,
    async (i) => {
      const s = sources[i % sources.length];
      const res = await fetch(`${emulatorUrl}/xrpc/com.atproto.repo.createRecord`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${s.accessJwt}` },
        body: JSON.stringify({
          repo: s.did,
          collection: "app.bsky.feed.post",
          record: { $type: "app.bsky.feed.post", text: `background post ${i}`, createdAt: new Date().toISOString() },
        }),
      });
      if (!res.ok) throw new Error(`background createRecord: ${res.status} ${await res.text()}`);
      made.push({ source: i % sources.length, uri: ((await res.json()) as { uri: string }).uri });
    },
  );
  const rows = made.map((m) => ({
    account: sources[m.source].id,
    uri: m.uri,
    url: `https://bsky.app/profile/${sources[m.source].handle}/post/${m.uri.slice(m.uri.lastIndexOf("/") + 1)}`,
  }));
  for (let k = 0; k < rows.length; k += 2_000) {
    const part = rows.slice(k, k + 2_000);
    await ctx.db.rows(sql`
      with v as (
        select gen_random_uuid() as post_id, a::uuid as account_id, u as uri, w as url
        from unnest(${`{${part.map((r) => r.account).join(",")}}`}::text[],
                    ${`{${part.map((r) => `"${r.uri}"`).join(",")}}`}::text[],
                    ${`{${part.map((r) => `"${r.url}"`).join(",")}}`}::text[]) as x(a, u, w)
      ), p as (
        insert into posts (id, profile_id, content) select post_id, ${profileId}::uuid, 'background post' from v returning id
      )
      insert into post_targets (post_id, profile_id, account_id, platform, status, scheduled_time, due_at, published_at,
        platform_post_id, platform_post_url)
      select post_id, ${profileId}::uuid, account_id, 'bluesky', 'published', now(), now(), now(), uri, url from v`);
  }

  // Enabled now, after the posts: a poll copies only what its source publishes from here on.
  const workflowIds: string[] = [];
  for (let i = 0; i < sources.length; i++) {
    const wf = await createWorkflow(ctx, profileId, {
      name: `background ${i}`,
      source_account_id: sources[i].id,
      target_account_ids: [destinationIds[i % destinationIds.length]],
      is_active: true,
    });
    workflowIds.push(wf.value.id);
  }
  // Not due until the window opens.
  await ctx.db.rows(sql`update workflows set poll_due_at = 'infinity' returning id`);
  console.log(
    `  background: ${made.length} posts on the emulator from ${sources.length} source accounts, ${workflowIds.length} active workflows (${((performance.now() - t0) / 1000).toFixed(1)} s to seed)`,
  );

  return {
    async arm(windowStart, windowSeconds) {
      // Spread over the window as steady polling spreads them, from its first second to its last.
      await ctx.db.rows(sql`
        update workflows w set poll_due_at = ${windowStart.toISOString()}::timestamptz
          + (1000 + (o.n - 1) * ${((windowSeconds - 1) * 1000) / Math.max(1, workflowIds.length - 1)}::float8) * interval '1 millisecond'
        from (select id, row_number() over (order by name) as n from workflows) o
        where w.id = o.id returning w.id`);
      // The job's next run comes due now (a serving copy runs it every 15 s): the pass reads every post due.
      await ctx.db.rows(sql`update engine_jobs set next_run_at = now() where name = 'analytics' returning name`);
    },
    async report(from, to) {
      const [a] = await ctx.db.rows<{ read: number; all: number; first: number | null; last: number | null }>(sql`
        select count(distinct i.id) filter (where i.last_updated between ${from.toISOString()}::timestamptz and ${to.toISOString()}::timestamptz
            and i.platform_post_id = any(${`{${rows.map((r) => `"${r.uri}"`).join(",")}}`}::text[]))::int as read,
          count(distinct s.item_id)::int as all,
          extract(epoch from min(s.observed_at)) * 1000 as first, extract(epoch from max(s.observed_at)) * 1000 as last
        from analytics_items i left join metric_snapshots s on s.item_id = i.id
          and s.observed_at between ${from.toISOString()}::timestamptz and ${to.toISOString()}::timestamptz`);
      const [w] = await ctx.db.rows<{ polled: number; failed: number; first: number | null; last: number | null }>(sql`
        select count(*) filter (where last_checked between ${from.toISOString()}::timestamptz and ${to.toISOString()}::timestamptz)::int as polled,
          count(*) filter (where last_error is not null)::int as failed,
          extract(epoch from min(last_checked) filter (where last_checked >= ${from.toISOString()}::timestamptz)) * 1000 as first,
          extract(epoch from max(last_checked)) * 1000 as last
        from workflows`);
      const at = (t: number | null) => (t === null ? "–" : `${((Number(t) - from.getTime()) / 1000).toFixed(1)} s`);
      return (
        `analytics read the numbers of ${a.read} of the ${rows.length} background posts (${a.all} items in all, from ${at(a.first)} to ${at(a.last)} into the window); ` +
        `${w.polled} of ${workflowIds.length} workflows polled (from ${at(w.first)} to ${at(w.last)}), ${w.failed} failed`
      );
    },
    async remove() {
      await ctx.db.rows(sql`delete from workflows returning id`);
      // Truncated, not deleted: the dead rows a delete leaves would be scanned all the same.
      await ctx.db.rows(sql`truncate analytics_items, metric_snapshots`);
    },
  };
}
