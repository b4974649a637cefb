// Bulk import (POST /v1/posts/bulk) through the app's own request handling, in process:
// (a) a dry run of a BENCH_ROWS=1,000-row CSV (two accounts a row, every third with a media URL) against the
//     yardstick of the same 1,000 posts checked one by one with POST /v1/posts/validate, and against a bare
//     csv-parse of the same file; median of BENCH_RUNS=5 alternating runs. Goals: under 2 s, and at most
//     0.5 × the single calls (the import shares its reads across rows).
// (b) the import of the same rows against the yardstick of 1,000 single POST /v1/posts with an
//     Idempotency-Key each (the same work a row does); one run of each. Goal: at most 1.5 × the single calls.
// BENCH_DATABASE_URL=postgres://… runs on a scratch PostgreSQL database, empty runs on an embedded PGlite.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { createApp } from "../src/app.ts";
import { systemClock } from "../src/clock.ts";
import { loadConfig } from "../src/config.ts";
import type { AppContext } from "../src/context.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { createLogger } from "../src/log.ts";
import { accountCredentials, upsertConnectedAccount } from "../src/modules/accounts/service.ts";
import { createKey, createProfile } from "../src/modules/keys/service.ts";
import { SCOPES } from "../src/http/scopes.ts";
import { createRegistry } from "../src/platform/host/registry.ts";
import { createStorage } from "../src/storage/index.ts";
import { figure, times } from "./figures.ts";
import { BENCH_SECRET, benchContext, scratchDatabase } from "./engine-support.ts";

const ROWS = Number(process.env.BENCH_ROWS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

const scratch = process.env.BENCH_DATABASE_URL ? await scratchDatabase() : null;
const ctx: AppContext = scratch ? benchContext(scratch.url, {}) : await embeddedContext();
const where = scratch ? "PostgreSQL" : "PGlite";

async function embeddedContext(): Promise<AppContext> {
  const dataDir = mkdtempSync(join(tmpdir(), "crier-bench-bulk-"));
  const config = loadConfig({
    DATA_DIR: dataDir,
    SECRET_KEY: BENCH_SECRET,
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "0",
  });
  const db = await openDatabase({ dataDir });
  await migrate(db);
  return {
    config,
    db,
    clock: systemClock,
    log: createLogger("silent"),
    platforms: createRegistry(),
    storage: createStorage(config),
    credentials: accountCredentials({ db, config, clock: systemClock }),
  };
}

const app = createApp(ctx);
const profile = await createProfile(ctx.db, "bench", false);
const { token } = await createKey(ctx.db, { name: "bench", profileId: profile.id, scopes: [...SCOPES] });
const account = async (platform: string, remoteId: string) =>
  (
    await upsertConnectedAccount(ctx, {
      profileId: profile.id,
      platform,
      remoteId,
      username: `${remoteId}.bench`,
      credentials: { did: remoteId, accessJwt: "a", refreshJwt: "r", handle: remoteId, bot_token: "1:x" },
    })
  ).id;
const bsky = await account("bluesky", "did:plc:bench");
const telegram = await account("telegram", "-100999");

/** The rows, as POST /v1/posts bodies and as one CSV file; `tag` keeps each set's posts (and keys) apart. */
function rows(tag: string) {
  const at = (i: number) => new Date(Date.now() + (24 + i / 10) * 3600_000).toISOString();
  const bodies = Array.from({ length: ROWS }, (_, i) => ({
    content: `${tag} post ${i} with a few words of text, as a scheduled post would have`,
    publish_at: at(i),
    ...(i % 3 === 0 ? { media: [{ url: `https://cdn.example.com/${tag}/${i}.jpg` }] } : {}),
    targets: [{ account_id: bsky }, { account_id: telegram, platform_options: { disable_notification: true } }],
  }));
  const cell = (c: string) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  const csv = [
    "content,publish_at,account_ids,media_urls,options",
    ...bodies.map((b) =>
      [
        b.content,
        b.publish_at,
        `${bsky} ${telegram}`,
        b.media?.[0].url ?? "",
        JSON.stringify({ [telegram]: { disable_notification: true } }),
      ]
        .map(cell)
        .join(","),
    ),
  ].join("\n");
  return { bodies, csv };
}

async function send(path: string, body: string, type: string, headers: Record<string, string> = {}) {
  const res = await app.handle(
    new Request(`http://localhost${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": type, ...headers },
      body,
    }),
  );
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

const timed = async (run: () => Promise<unknown>) => {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// (a) dry run against 1,000 single validate calls and a bare parse.
const check = rows("dry");
const dry: number[] = [];
const singles: number[] = [];
const parses: number[] = [];
// A warm-up of each side first (route compilation, prepared statements).
await send("/v1/posts/bulk?dry_run=true", check.csv, "text/csv");
await send("/v1/posts/validate", JSON.stringify(check.bodies[0]), "application/json");
for (let r = 0; r < RUNS; r++) {
  dry.push(
    await timed(async () => {
      const d = (await send("/v1/posts/bulk?dry_run=true", check.csv, "text/csv")).data;
      if (d.ok !== ROWS)
        throw new Error(`dry run: ${d.failed} rows failed: ${JSON.stringify(d.rows.find((x: any) => !x.ok))}`);
    }),
  );
  singles.push(
    await timed(async () => {
      for (const b of check.bodies) await send("/v1/posts/validate", JSON.stringify(b), "application/json");
    }),
  );
  parses.push(await timed(async () => parse(check.csv, { bom: true, relax_column_count: true })));
}
const dryMs = median(dry);
const singleMs = median(singles);
const parseMs = median(parses);

// (b) import against 1,000 single creates with keys.
const load = rows("import");
const importMs = await timed(async () => {
  const d = (await send("/v1/posts/bulk", load.csv, "text/csv")).data;
  if (d.created !== ROWS) throw new Error(`import created ${d.created} of ${ROWS}`);
});
const one = rows("single");
const createMs = await timed(async () => {
  for (const [i, b] of one.bodies.entries())
    await send("/v1/posts", JSON.stringify(b), "application/json", { "idempotency-key": `single:${i}` });
});

console.log(`bulk import on ${where}: ${ROWS} rows (2 targets each), median of ${RUNS} runs`);
console.log(`  dry run            ${dryMs.toFixed(0)} ms`);
console.log(
  `  ${ROWS} × validate     ${singleMs.toFixed(0)} ms  (dry run = ${(dryMs / singleMs).toFixed(2)} × of it, goal ≤ 0.5)`,
);
console.log(
  `  bare csv-parse     ${parseMs.toFixed(1)} ms  (dry run = ${(dryMs / parseMs).toFixed(0)} × a parse alone)`,
);
console.log(`  import             ${importMs.toFixed(0)} ms`);
console.log(
  `  ${ROWS} × create       ${createMs.toFixed(0)} ms  (import = ${(importMs / createMs).toFixed(2)} × of it, goal ≤ 1.5)`,
);
figure(`bulk ${where}: ${ROWS}-row dry run`, `${dryMs.toFixed(0)} ms`, "< 2000 ms", dryMs < 2000);
figure(
  `bulk ${where}: dry run vs ${ROWS} validate calls`,
  times(dryMs / singleMs, 0.5),
  "≤ 0.5 ×",
  dryMs / singleMs <= 0.5,
);
figure(
  `bulk ${where}: import vs ${ROWS} creates`,
  times(importMs / createMs, 1.5),
  "≤ 1.5 ×",
  importMs / createMs <= 1.5,
);
await ctx.db.close();
await scratch?.drop();
process.exit(0);
