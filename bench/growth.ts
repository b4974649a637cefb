// bench/growth: does the cost stay flat with a million posts?
//   BENCH_DATABASE_URL=postgres://... npx bun bench/growth.ts
// Two databases served by this process: the yardstick with 100 posts and the other with BENCH_POSTS=1,000,000,
// both made by the same SQL statement (3 targets a post, 90 % published in the past, 10 % scheduled in the
// future), vacuumed and checkpointed. In alternating rounds: p99 of GET /v1/posts?limit=100 walking the
// million's pages with the cursor (BENCH_PAGES=10,000 pages, the whole table) against the yardstick's one page
// (BENCH_EMPTY_SAMPLES times), and of GET /v1/accounts (wrk -c10, BENCH_ACCOUNT_ROUNDS=10 pairs of
// 3 s runs, the ratio is the median of the pairs' ratios);
// the claim query's plan (EXPLAIN ANALYZE); dispatch lag with targets falling due at a steady 100/s for
// BENCH_LAG_SECONDS=15, one copy as `crier serve` runs it.
// Goals: both p99 within 2 × the yardstick's; lag p99 < 1 s; the plan reads only due rows.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { createApp } from "../src/app.ts";
import { SCOPES } from "../src/http/scopes.ts";
import { upsertConnectedAccount } from "../src/modules/accounts/service.ts";
import { createKey, createProfile } from "../src/modules/keys/service.ts";
import { serveEmulator } from "../src/platform/emulator-kit.ts";
import { connectContext } from "../src/platform/host/provider.ts";
import { createBlueskyEmulator } from "../plugins/bluesky/emulator.ts";
import { benchContext, pct, requireWrk, scratchDatabase, seedTargets } from "./engine-support.ts";
import { figure } from "./figures.ts";

requireWrk("bench/growth");
const POSTS = Number(process.env.BENCH_POSTS ?? 1_000_000);
const PAGES = Number(process.env.BENCH_PAGES ?? 10_000);
const EMPTY_SAMPLES = Number(process.env.BENCH_EMPTY_SAMPLES ?? 2_000);
const LAG_SECONDS = Number(process.env.BENCH_LAG_SECONDS ?? 15);
const ROUNDS = 10;
const ACCOUNT_ROUNDS = Number(process.env.BENCH_ACCOUNT_ROUNDS ?? 10);
const ACCOUNTS = 3;

const emulator = createBlueskyEmulator();
const served = serveEmulator(emulator);

/** One database with the API in front of it: the million and the yardstick are served the same way. */
async function side(name: string) {
  const scratch = await scratchDatabase();
  const ctx = benchContext(scratch.url, { CRIER_BLUESKY_API_URL: served.url }, 20);
  const profile = await createProfile(ctx.db, name);
  const { token } = await createKey(ctx.db, { name, profileId: profile.id, scopes: [...SCOPES] });
  const plugin = ctx.platforms.get("bluesky")!;
  if (plugin.connect?.mode !== "credential_form_url") throw new Error("unexpected Bluesky connect flow");
  const accountIds: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const identity = await plugin.connect.verify(connectContext(ctx, "bluesky", { sandbox: false }), {
      handle: `growth${i}.test`,
      app_password: "abcd-efgh-ijkl-mnop",
    });
    accountIds.push(
      (await upsertConnectedAccount(ctx, { profileId: profile.id, platform: "bluesky", ...identity })).id,
    );
  }
  const api = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: createApp(ctx).handle });
  return { scratch, ctx, profileId: profile.id, accountIds, token, api, auth: { authorization: `Bearer ${token}` } };
}
type Side = Awaited<ReturnType<typeof side>>;

/** `count` posts of 3 targets each in one statement: 90 % published in the past, 10 % scheduled in 30 days. */
async function generate(s: Side, count: number) {
  // Without the statement timeout the copies' configuration sets (5 s): a million posts and their three
  // million targets take longer than that in one statement.
  await s.ctx.db.db.transaction(async (tx) => {
    await tx.execute(sql`set local statement_timeout = 0`);
    await tx.execute(sql`
    with p as (
      insert into posts (id, profile_id, content, created_at, updated_at, publish_at)
      select gen_random_uuid(), ${s.profileId}::uuid, 'growth post ' || i,
        now() - (i * interval '1 second'), now() - (i * interval '1 second'),
        case when i % 10 = 0 then now() + interval '30 days' + (i * interval '1 second') else now() - (i * interval '1 second') end
      from generate_series(1, ${count}) as i
      returning id, publish_at
    )
    insert into post_targets (post_id, profile_id, account_id, platform, position, status, scheduled_time, due_at,
      attempts, published_at, platform_post_id, created_at, updated_at)
    select p.id, ${s.profileId}::uuid, a.id, 'bluesky', 0,
      case when p.publish_at > now() then 'scheduled' else 'published' end, p.publish_at, p.publish_at,
      case when p.publish_at > now() then 0 else 1 end,
      case when p.publish_at > now() then null else p.publish_at end,
      case when p.publish_at > now() then null else 'at://' || p.id end, p.publish_at, p.publish_at
    from p cross join unnest(${`{${s.accountIds.join(",")}}`}::uuid[]) as a(id)`);
  });
}

/**
 * Steady state after a bulk load. The first reader of each freshly inserted row pays for setting its hint
 * bits, dirtying every page of the 3M rows, and the bulk insert's WAL leaves a checkpoint writing for minutes:
 * one-off work of the load, not of a database that grew to a million posts. A server vacuums an insert-only
 * table by itself (autovacuum_vacuum_insert_threshold) but the bench server runs with autovacuum off, so the
 * bench does what autovacuum would, then checkpoints, before measuring. Both sides get the same treatment.
 */
async function settle(s: Side) {
  await s.ctx.db.rows(sql`vacuum (analyze) posts, post_targets`);
  await s.ctx.db.rows(sql`checkpoint`);
}

async function accountsP99(s: Side): Promise<number> {
  const script = join(tmpdir(), `crier-bench-growth-${process.pid}.lua`);
  writeFileSync(script, `wrk.headers["Authorization"] = "Bearer ${s.token}"\n`);
  const child = Bun.spawn(["wrk", "-t1", "-c10", "-d3s", "--latency", "-s", script, `${s.api.url}v1/accounts`], {
    stdout: "pipe",
  });
  const out = await new Response(child.stdout).text();
  const m = /\s99%\s+([\d.]+)(us|ms|s)/.exec(out);
  if (!m) throw new Error(`wrk gave no p99:\n${out}`);
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
}

/**
 * Milliseconds per page in walking order, following meta.next_after / next_after_id from `from.cursor` on
 * (which it advances), or the first page again and again with `repeatFirst`.
 */
async function walkPagesInOrder(s: Side, pages: number, from = { cursor: "" }, repeatFirst = false) {
  const times: number[] = [];
  for (let i = 0; i < pages; i++) {
    const t0 = performance.now();
    const res = await fetch(`${s.api.url}v1/posts?limit=100${from.cursor}`, { headers: s.auth });
    const body = (await res.json()) as { data: unknown[]; meta: { next_after?: string; next_after_id?: string } };
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`GET /v1/posts: ${res.status} ${JSON.stringify(body)}`);
    if (repeatFirst) continue;
    if (!body.meta.next_after) break;
    from.cursor = `&after=${encodeURIComponent(body.meta.next_after)}&after_id=${body.meta.next_after_id}`;
  }
  return times;
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => pct(sorted(xs), 50);

console.log(`bench/growth: ${POSTS} posts × 3 targets, PostgreSQL`);
const empty = await side("empty");
const full = await side("bench");
const { ctx, profileId, accountIds, scratch } = full;
// The yardstick's page is the same page: 100 posts of 3 targets made by the same statement (a page of
// 1-target posts is a third of the rows and of the JSON, which is not what growth is about).
await generate(empty, 100);
await settle(empty);

const t0 = performance.now();
await generate(full, POSTS);
const [{ posts: nPosts, targets: nTargets }] = await ctx.db.rows<{ posts: number; targets: number }>(
  sql`select (select count(*) from posts)::int as posts, (select count(*) from post_targets)::int as targets`,
);
console.log(
  `  generated ${nPosts} posts, ${nTargets} targets in ${((performance.now() - t0) / 1000).toFixed(1)} s (SQL)`,
);
const t1 = performance.now();
await settle(full);
console.log(`  vacuum (analyze) and checkpoint in ${((performance.now() - t1) / 1000).toFixed(1)} s`);

// The claim's first step as crier_claim runs it for a platform: its due rows in the waiting index, nothing else.
const plan = await ctx.db.rows<{ "QUERY PLAN": string }>(sql`
  explain (analyze, buffers, costs off)
  select t.account_id, t.due_at from post_targets t
  where t.platform = 'bluesky' and (t.status || '') in ('pending', 'scheduled') and t.due_at <= now()
    and t.account_id is not null and not (t.account_id = any ('{}'::uuid[]))
  order by t.due_at limit 64`);
const planText = plan.map((r) => r["QUERY PLAN"]).join("\n");
console.log(`  the claim's candidate scan with ${nTargets} targets:\n${planText.replace(/^/gm, "    ")}`);
const scanned = /Index (?:Only )?Scan using (\S+)/.exec(planText)?.[1];
const onlyDue = scanned === "post_targets_waiting_platform_idx" && !/Seq Scan/.test(planText);

// Both databases are measured in the same run, in alternating rounds, so that the load of a shared machine
// falls on the yardstick and on the million alike (measured minutes apart, one busy minute decided the ratio).
// Pages: each round samples the empty database's page then walks the next tenth of the million's pages.
await walkPagesInOrder(empty, 50, undefined, true); // warm
await walkPagesInOrder(full, 20); // warm
const emptyTimes: number[] = [];
const walk: number[] = [];
const cursor = { cursor: "" };
for (let round = 0; round < ROUNDS; round++) {
  emptyTimes.push(...(await walkPagesInOrder(empty, Math.ceil(EMPTY_SAMPLES / ROUNDS), undefined, true)));
  walk.push(...(await walkPagesInOrder(full, Math.ceil(PAGES / ROUNDS), cursor)));
}
const emptyPage = pct(sorted(emptyTimes), 99);
const fullPage = pct(sorted(walk), 99);
const tenth = Math.max(1, Math.floor(walk.length / 10));
// GET /v1/accounts: ACCOUNT_ROUNDS pairs of wrk runs, one on each side back to back (which goes first
// alternates). Both do the same work; a stall of the shared machine lasts seconds and lands on one run of a
// pair, so the ratio is the median of the pairs' ratios, and each side's p99 the median of its runs (every
// run printed). Measured minutes apart, one 5 s run each, the same empty database gave 294 ms then 23 ms.
const emptyRuns: number[] = [];
const fullRuns: number[] = [];
for (let round = 0; round < ACCOUNT_ROUNDS; round++) {
  if (round % 2) fullRuns.push(await accountsP99(full));
  emptyRuns.push(await accountsP99(empty));
  if (!(round % 2)) fullRuns.push(await accountsP99(full));
}
const emptyAccounts = median(emptyRuns);
const fullAccounts = median(fullRuns);
const accountsRatio = median(fullRuns.map((x, i) => x / emptyRuns[i]));
const runs = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(", ");
console.log(
  `  empty: GET /v1/posts page p99 ${emptyPage.toFixed(2)} ms (${emptyTimes.length} samples); GET /v1/accounts p99 ${emptyAccounts.toFixed(2)} ms (runs ${runs(emptyRuns)})`,
);
console.log(
  `  ${POSTS} posts: GET /v1/posts ${walk.length} pages, p99 ${fullPage.toFixed(2)} ms (first tenth of the pages p99 ${pct(sorted(walk.slice(0, tenth)), 99).toFixed(2)} ms, last tenth ${pct(sorted(walk.slice(-tenth)), 99).toFixed(2)} ms); GET /v1/accounts p99 ${fullAccounts.toFixed(2)} ms (runs ${runs(fullRuns)})`,
);
empty.api.stop(true);
await empty.ctx.db.close();
await empty.scratch.drop();

// Lag: targets due at a steady 100/s among the million, one copy ticking as `crier serve` does.
const lagTargets = LAG_SECONDS * 100;
await ctx.db.rows(sql`delete from posts where content like 'bench post %'`);
// The copy counts targets due by BENCH_UNTIL; they are seeded once it has started (see below).
let firstDue = new Date(Date.now() + 60_000);
const until = new Date(firstDue.getTime() + 60_000 + lagTargets * 10).toISOString();
const copy = spawn(process.execPath, ["bench/dispatch-copy.ts"], {
  env: {
    ...process.env,
    BENCH_DB_URL: scratch.url,
    CRIER_BLUESKY_API_URL: served.url,
    COPY_ID: "growth",
    MODE: "ticks",
    BENCH_UNTIL: until,
  },
  stdio: ["pipe", "pipe", "inherit"],
});
let out = "";
let goAt = 0;
await new Promise<void>((resolve, reject) => {
  copy.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.includes("ready\n") && !out.includes("go-sent")) {
      out += "go-sent";
      firstDue = new Date(Date.now() + 1000);
      seedTargets(ctx.db, profileId, accountIds, lagTargets, firstDue, 10).then(() => {
        goAt = Date.now();
        copy.stdin!.write("go\n");
      }, reject);
    }
    if (out.includes("done\n")) resolve();
  });
  copy.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`copy exited with ${code}`))));
});
const inOrder = (
  await ctx.db.rows<{ ms: number }>(sql`
    select extract(epoch from (published_at - scheduled_time)) * 1000 as ms from post_targets
    where status = 'published' and scheduled_time >= ${firstDue.toISOString()}::timestamptz
    order by scheduled_time`)
).map((r) => Number(r.ms));
const lags = sorted(inOrder);
// Where the worst lags fell: the copy's first second (its engine starting, the first due target 1 s after
// seeding began) or the steady state after it.
console.log(
  `  the copy started ${goAt - firstDue.getTime() + 1000} ms after seeding began (first target due at 1000 ms); lag p99 of the first second's targets ${pct(sorted(inOrder.slice(0, 100)), 99).toFixed(0)} ms, of the rest ${pct(sorted(inOrder.slice(100)), 99).toFixed(0)} ms`,
);
const lagP99 = pct(lags, 99);
console.log(
  `  dispatch lag at 100 targets/s among ${nTargets} targets: ${lags.length}/${lagTargets} published, p50 ${pct(lags, 50).toFixed(0)} ms, p99 ${lagP99.toFixed(0)} ms`,
);

figure(
  "Growth: GET /v1/posts?limit=100 page p99, 1M posts ÷ empty",
  `${(fullPage / emptyPage).toFixed(2)} × (${fullPage.toFixed(1)} ms)`,
  "≤ 2 ×",
  fullPage <= 2 * emptyPage,
);
figure(
  "Growth: GET /v1/accounts p99, 1M posts ÷ empty",
  `${accountsRatio.toFixed(2)} × (${fullAccounts.toFixed(1)} ms)`,
  "≤ 2 ×",
  accountsRatio <= 2,
);
figure("Growth: dispatch lag p99 at 100 targets/s, 1M posts", `${lagP99.toFixed(0)} ms`, "< 1000 ms", lagP99 < 1000);
figure(
  "Growth: claim plan reads only due rows",
  scanned ?? "no index scan",
  "post_targets_waiting_platform_idx",
  onlyDue,
);

full.api.stop(true);
await ctx.db.close();
await served.stop();
await scratch.drop();
process.exit(0);
