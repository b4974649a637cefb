// Webhook delivery against a bare loop, in the same run: 10,000 events (BENCH_EVENTS) written to the outbox
// through the same SQL function the triggers use, delivered by the engine's sender to a local receiver
// that answers at once, against a bare loop POSTing the same payloads one after another (goal ≥ 0.5 ×
// bare); then event-to-delivery latency with events written at a steady 100/s for BENCH_LAG_SECONDS=10
// (goal p99 < 1 s). BENCH_DATABASE_URL=postgres://… runs on PostgreSQL, else on an embedded PGlite.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { systemClock } from "../src/clock.ts";
import { loadConfig } from "../src/config.ts";
import type { AppContext } from "../src/context.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { createEngine } from "../src/engine/scheduler.ts";
import { WebhookSender } from "../src/engine/webhooks.ts";
import { createLogger } from "../src/log.ts";
import { accountCredentials } from "../src/modules/accounts/service.ts";
import { createProfile } from "../src/modules/keys/service.ts";
import { createWebhook } from "../src/modules/webhooks/service.ts";
import { createRegistry } from "../src/platform/host/registry.ts";
import { createStorage } from "../src/storage/index.ts";
import { figure, times } from "./figures.ts";
import { BENCH_SECRET, benchContext, scratchDatabase } from "./engine-support.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const LAG_SECONDS = Number(process.env.BENCH_LAG_SECONDS ?? 10);
const pgBase = process.env.BENCH_DATABASE_URL;
const scratch = pgBase ? await scratchDatabase() : undefined;
const ctx: AppContext = scratch
  ? benchContext(scratch.url, { WEBHOOK_ALLOW_PRIVATE: "true" })
  : await embeddedContext();
const { db } = ctx;

async function embeddedContext(): Promise<AppContext> {
  const dataDir = mkdtempSync(join(tmpdir(), "crier-bench-webhooks-"));
  const config = loadConfig({
    DATA_DIR: dataDir,
    SECRET_KEY: BENCH_SECRET,
    LOG_LEVEL: "silent",
    WEBHOOK_ALLOW_PRIVATE: "true",
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

let received = 0;
const lags: number[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { data?: { sent?: number } };
    received++;
    if (body.data?.sent) lags.push(Date.now() - body.data.sent);
    return new Response("ok");
  },
});
const hookUrl = `http://127.0.0.1:${receiver.port}/hook`;
const profile = await createProfile(db, "bench");
await createWebhook(ctx, profile.id, { url: hookUrl, events: ["*"] });

const emit = (n: number, data: unknown) =>
  db.rows(sql`select crier_webhook_emit(${profile.id}::uuid, 'post.created', ${JSON.stringify(data)}::jsonb)
    from generate_series(1, ${n})`);

// Throughput: the whole outbox at once, in rounds of bare loop then sender (each round its own fresh events),
// so that warm-up and the machine's other load fall on both alike.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const sender = new WebhookSender(ctx, { claimedBy: "bench", leaseMs: 60_000 }, ctx.log);
let bareSeconds = 0;
let ourSeconds = 0;
for (let round = 0; round < ROUNDS; round++) {
  await emit(EVENTS, { id: "bench", round, content: "x".repeat(200), targets: [] });
  const payloads = (
    await db.rows<{ payload: unknown }>(
      sql`select payload from webhook_events where payload->'data'->>'round' = ${String(round)}`,
    )
  ).map((r) => JSON.stringify(r.payload));
  let t0 = performance.now();
  for (const body of payloads) {
    const res = await fetch(hookUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
    await res.arrayBuffer();
  }
  bareSeconds += (performance.now() - t0) / 1000;
  received = 0;
  t0 = performance.now();
  await sender.drain();
  ourSeconds += (performance.now() - t0) / 1000;
  if (received !== EVENTS) throw new Error(`delivered ${received} of ${EVENTS} in round ${round + 1}`);
}
await sender.stop();
const bare = (ROUNDS * EVENTS) / bareSeconds;
const ours = (ROUNDS * EVENTS) / ourSeconds;

// Latency: an engine as `crier serve` runs it, events written at a steady 100/s.
const engine = createEngine(ctx, { jobs: [] });
engine.startTimer();
lags.length = 0;
const start = Date.now();
for (let i = 0; i < LAG_SECONDS * 100; i++) {
  const due = start + i * 10;
  const wait = due - Date.now();
  if (wait > 0) await Bun.sleep(wait);
  await emit(1, { sent: Date.now() });
}
const deadline = Date.now() + 10_000;
while (lags.length < LAG_SECONDS * 100 && Date.now() < deadline) await Bun.sleep(50);
await engine.stop();
lags.sort((a, b) => a - b);
const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))];

const where = scratch ? "PostgreSQL" : "PGlite";
console.log(`webhooks on ${where}: ${EVENTS} events × ${ROUNDS} rounds`);
console.log(`  bare loop      ${bare.toFixed(0)} POST/s`);
console.log(`  crier sender   ${ours.toFixed(0)} deliveries/s = ${(ours / bare).toFixed(2)} × bare (goal ≥ 0.5)`);
console.log(
  `  latency at 100 events/s over ${LAG_SECONDS} s: ${lags.length} delivered, p50 ${pct(50)} ms, p99 ${pct(99)} ms (goal p99 < 1000)`,
);
figure(`webhooks ${where}: deliveries/s vs bare`, times(ours / bare, 0.5), "≥ 0.5 ×", ours / bare >= 0.5);
figure(
  `webhooks ${where}: event-to-delivery p99`,
  `${pct(99)} ms`,
  "< 1000 ms",
  lags.length === LAG_SECONDS * 100 && pct(99) < 1000,
);
receiver.stop(true);
await db.close();
await scratch?.drop();
process.exit(0);
