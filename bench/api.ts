// bench/api: authenticated GET /v1/accounts and POST /v1/posts (1 and 3 targets) against bare Elysia routes
// doing the same database work in one statement, in the same run, with wrk at 50 connections
// (apt-get install wrk).
//   BENCH_DATABASE_URL=postgres://... npx bun bench/api.ts      (BENCH_SECONDS=10 per route)
// Yardsticks: GET against one prepared select of the profile's accounts; POST against one prepared
// statement inserting the same post and target rows from the same JSON body.
// Goals: each route ≥ 0.6 × its yardstick's requests/s; POST p99 < 20 ms.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { eq, sql } from "drizzle-orm";
import { accounts } from "../src/db/schema.ts";
import { createApp } from "../src/app.ts";
import { createKey, createProfile } from "../src/modules/keys/service.ts";
import { upsertConnectedAccount } from "../src/modules/accounts/service.ts";
import { SCOPES } from "../src/http/scopes.ts";
import { insertPostStatement } from "../src/db/post-insert.ts";
import { newRowId } from "../src/db/ids.ts";
import { benchContext, requireWrk, scratchDatabase } from "./engine-support.ts";
import { figure, times } from "./figures.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
requireWrk("bench/api");

const scratch = await scratchDatabase();
const ctx = benchContext(scratch.url, {}, 20);
const profile = await createProfile(ctx.db, "bench");
const { token } = await createKey(ctx.db, { name: "bench", profileId: profile.id, scopes: [...SCOPES] });
const accountIds: string[] = [];
for (let i = 0; i < 3; i++) {
  const row = await upsertConnectedAccount(ctx, {
    profileId: profile.id,
    platform: "bluesky",
    remoteId: `did:plc:bench${i}`,
    username: `bench${i}.test`,
    credentials: { did: `did:plc:bench${i}`, accessJwt: "a", refreshJwt: "r" },
  });
  accountIds.push(row.id);
}

const api = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: createApp(ctx).handle });
// The bare route's one query is a prepared statement, as the app's hot queries are (src/db/prepared.ts):
// the comparison is against the best one query can do, not against a describe-then-execute.
const bareQuery = ctx.db.db
  .select({ id: accounts.id, username: accounts.username, status: accounts.status })
  .from(accounts)
  .where(eq(accounts.profileId, sql.placeholder("profileId")))
  .prepare("bench_bare");
// The POST yardstick inserts what the API would (a post and its targets) in one prepared statement, from
// the parsed body, with no key check, validation or answer shaping; its ids are made as the API makes them.
const bareInsert = async (body: { content: string; publish_at: string; targets: { account_id: string }[] }) => {
  const id = newRowId();
  const now = new Date().toISOString();
  await insertPostStatement(ctx.db, {
    id,
    profileId: profile.id,
    content: body.content,
    externalId: null,
    media: "[]",
    origin: "api",
    publishAt: body.publish_at,
    draftId: null,
    workflowId: null,
    createdAt: now,
    updatedAt: now,
    status: "scheduled",
    scheduledTime: body.publish_at,
    dueAt: body.publish_at,
    targetsCreatedAt: now,
    targetsUpdatedAt: now,
    targets: JSON.stringify(
      body.targets.map((t, position) => ({
        id: newRowId(),
        account_id: t.account_id,
        platform: "bluesky",
        target_variant: null,
        position,
        content_override: null,
        platform_options: null,
      })),
    ),
  });
  return { id };
};
const bareApp = new Elysia()
  .get("/bare", () => bareQuery.execute({ profileId: profile.id }))
  .post("/bare", ({ body }) => bareInsert(body as never));
const bare = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: bareApp.handle });

const publishAt = new Date(Date.now() + 30 * 86400_000).toISOString();
const postScript = (targets: number) => {
  const file = join(tmpdir(), `crier-bench-post${targets}-${process.pid}.lua`);
  const body = {
    content: "Benchmark post with a #tag and a link https://example.com",
    publish_at: publishAt,
    targets: accountIds.slice(0, targets).map((id) => ({ account_id: id })),
  };
  writeFileSync(
    file,
    `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${token}"
wrk.body = '${JSON.stringify(body)}'
`,
  );
  return file;
};
const getScript = join(tmpdir(), `crier-bench-get-${process.pid}.lua`);
writeFileSync(getScript, `wrk.headers["Authorization"] = "Bearer ${token}"\n`);

const toMs = (v: string) => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v.trim());
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
};

function wrk(label: string, url: string, script?: string) {
  const args = ["-t2", "-c50", `-d${SECONDS}s`, "--latency", ...(script ? ["-s", script] : []), url];
  // wrk blocks this process's event loop; the servers under test live in this process, so run it
  // asynchronously instead.
  return new Promise<{ label: string; rps: number; p50: number; p99: number; non2xx: number }>((resolve, reject) => {
    const child = Bun.spawn(["wrk", ...args], { stdout: "pipe", stderr: "pipe" });
    new Response(child.stdout).text().then((out) => {
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
      const p50 = toMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? "");
      const p99 = toMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? "");
      const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
      if (!rps) reject(new Error(`wrk gave no figures for ${label}:\n${out}`));
      resolve({ label, rps, p50, p99, non2xx });
    }, reject);
  });
}

// A first call of each, so the check below fails loudly rather than measuring errors.
for (const [path, init] of [
  [`${api.url}v1/accounts`, { headers: { authorization: `Bearer ${token}` } }],
  [
    `${api.url}v1/posts`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "warm", publish_at: publishAt, targets: [{ account_id: accountIds[0] }] }),
    },
  ],
] as const) {
  const res = await fetch(path, init as RequestInit);
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
}
const bareCheck = await fetch(`${bare.url}bare`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ content: "warm", publish_at: publishAt, targets: [{ account_id: accountIds[0] }] }),
});
if (bareCheck.status !== 200) throw new Error(`bare POST: ${bareCheck.status} ${await bareCheck.text()}`);

console.log(`bench/api: wrk -t2 -c50 -d${SECONDS}s, PostgreSQL, server and bare routes in one Bun process`);
type Run = Awaited<ReturnType<typeof wrk>>;
const show = (r: Run) =>
  console.log(
    `  ${r.label.padEnd(56)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms${r.non2xx ? `  (${r.non2xx} non-2xx!)` : ""}`,
  );
/** The route between two runs of its yardstick (noise on a shared machine moves both alike). */
async function pair(label: string, url: string, bareUrl: string, script?: string) {
  const before = await wrk("yardstick", bareUrl, script);
  const route = await wrk(label, url, script);
  const after = await wrk("yardstick (again)", bareUrl, script);
  for (const r of [before, route, after]) show(r);
  const ratio = route.rps / ((before.rps + after.rps) / 2);
  console.log(`  → ${label}: ${ratio.toFixed(2)} × yardstick (goal ≥ 0.6)`);
  return { ratio, route };
}
const get = await pair("GET /v1/accounts (auth + list)", `${api.url}v1/accounts`, `${bare.url}bare`, getScript);
figure("API GET /v1/accounts ÷ one prepared select", times(get.ratio, 0.6), "≥ 0.6 ×", get.ratio >= 0.6);
for (const n of [1, 3]) {
  const script = postScript(n);
  const post = await pair(
    `POST /v1/posts, ${n} target${n > 1 ? "s" : ""}`,
    `${api.url}v1/posts`,
    `${bare.url}bare`,
    script,
  );
  figure(
    `API POST /v1/posts (${n} target${n > 1 ? "s" : ""}) ÷ one insert of the same rows`,
    times(post.ratio, 0.6),
    "≥ 0.6 ×",
    post.ratio >= 0.6,
  );
  figure(
    `API POST /v1/posts (${n} target${n > 1 ? "s" : ""}) p99 at c=50`,
    `${post.route.p99.toFixed(1)} ms`,
    "< 20 ms",
    post.route.p99 < 20,
  );
}
const [{ n }] = await ctx.db.rows<{ n: number }>(sql`select count(*)::int as n from posts`);
console.log(`posts created during the run: ${n}`);

api.stop(true);
bare.stop(true);
await ctx.db.close();
await scratch.drop();
process.exit(0);
