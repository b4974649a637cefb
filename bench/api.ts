// bench/api: authenticated GET /v1/accounts and POST /v1/posts against a bare Elysia route doing one
// query, in the same run, with wrk at 50 connections (apt-get install wrk).
//   BENCH_DATABASE_URL=postgres://... npx bun bench/api.ts      (BENCH_SECONDS=10 per route)
// Goals: each route ≥ 0.5 × the bare route's requests/s; POST p99 < 20 ms.
import { spawnSync } from "node:child_process";
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
import { benchContext, scratchDatabase } from "./engine-support.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
if (spawnSync("wrk", ["--version"]).error) {
  console.error("bench/api needs wrk on the PATH (apt-get install wrk).");
  process.exit(2);
}

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
const bareApp = new Elysia().get("/bare", () => bareQuery.execute({ profileId: profile.id }));
const bare = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: bareApp.handle });

const publishAt = new Date(Date.now() + 30 * 86400_000).toISOString();
const postScript = join(tmpdir(), `crier-bench-post-${process.pid}.lua`);
writeFileSync(
  postScript,
  `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${token}"
wrk.body = '${JSON.stringify({ content: "Benchmark post with a #tag and a link https://example.com", publish_at: publishAt, targets: accountIds.map((id) => ({ account_id: id })) })}'
`,
);
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

console.log(`bench/api: wrk -t2 -c50 -d${SECONDS}s, PostgreSQL, server and bare route in one Bun process`);
const results = [];
results.push(await wrk("bare Elysia route, one query", `${bare.url}bare`));
results.push(await wrk("GET /v1/accounts (auth + list)", `${api.url}v1/accounts`, getScript));
results.push(await wrk("POST /v1/posts (auth + validate + insert, 3 targets)", `${api.url}v1/posts`, postScript));
results.push(await wrk("bare Elysia route, one query (again)", `${bare.url}bare`));

const bareRps = (results[0].rps + results[3].rps) / 2;
for (const r of results) {
  console.log(
    `${r.label.padEnd(56)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms${r.non2xx ? `  (${r.non2xx} non-2xx!)` : ""}`,
  );
}
console.log(`GET /v1/accounts: ${(results[1].rps / bareRps).toFixed(2)} × bare (goal ≥ 0.5)`);
console.log(
  `POST /v1/posts:   ${(results[2].rps / bareRps).toFixed(2)} × bare (goal ≥ 0.5); p99 ${results[2].p99.toFixed(2)} ms (goal < 20 ms)`,
);
const [{ n }] = await ctx.db.rows<{ n: number }>(sql`select count(*)::int as n from posts`);
console.log(`posts created during the run: ${n}`);

api.stop(true);
bare.stop(true);
await ctx.db.close();
await scratch.drop();
process.exit(0);
