// bench/hostile-json: what hostile JSON bodies cost the server, sent with a valid key over real HTTP.
//   BENCH_DATABASE_URL=postgres://... npx bun bench/hostile-json.ts
// For each body: status, answer time, and the server process's RSS growth (peak, sampled every 5 ms);
// then /healthz answer time while 3 of the deepest bodies are in flight at once.
// Goals: every hostile body 400 invalid_json in < 50 ms, RSS growth < 50 MB, /healthz < 100 ms meanwhile.
import { createApp } from "../src/app.ts";
import { serveApp } from "../src/http/serve.ts";
import { createKey, createProfile } from "../src/modules/keys/service.ts";
import { SCOPES } from "../src/http/scopes.ts";
import { benchContext, scratchDatabase } from "./engine-support.ts";

const scratch = await scratchDatabase();
const ctx = benchContext(scratch.url, {}, 10);
const profile = await createProfile(ctx.db, "bench");
const { token } = await createKey(ctx.db, { name: "bench", profileId: profile.id, scopes: [...SCOPES] });
const server = serveApp(createApp(ctx), { hostname: "127.0.0.1", port: 0, config: ctx.config, log: ctx.log });
const base = `http://127.0.0.1:${server.port}`;

const BODIES: Record<string, string> = {
  '{"a": × 20,000 (closed)': `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`,
  '{"a": × 20,000 (unclosed)': '{"a":'.repeat(20_000),
  "[ × 100,000 (closed)": `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
  "media: 5,000 nested arrays": `{"content":"x","media":${"[".repeat(5_000)}${"]".repeat(5_000)}}`,
  "media: 100,000 items": `{"content":"x","media":[${Array(100_000).fill("{}").join(",")}]}`,
  "media: 9,000 bad items (under the cap)": `{"content":"x","media":[${Array(9_000).fill("{}").join(",")}]}`,
};

const send = (raw: string) =>
  fetch(`${base}/v1/drafts`, {
    method: "POST",
    body: raw,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
  });

/** Runs `work` while sampling RSS; returns its result, the time it took and the peak RSS growth. */
async function measured<T>(work: () => Promise<T>) {
  Bun.gc(true);
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const t0 = performance.now();
  const result = await work();
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { result, ms, mb: (peak - rss0) / 1024 / 1024 };
}

// Warm up (key lookup, compiled validators) so the first row measures the body, not the first request.
for (let i = 0; i < 20; i++) await (await send(JSON.stringify({ content: "warm-up" }))).text();

const rows: string[][] = [["body", "size", "status", "code", "time ms", "RSS growth MB"]];
for (const [name, raw] of Object.entries(BODIES)) {
  const { result, ms, mb } = await measured(async () => {
    const res = await send(raw);
    return { status: res.status, code: ((await res.json()) as { error?: { code: string } }).error?.code ?? "" };
  });
  rows.push([
    name,
    `${Math.round(raw.length / 1024)} KB`,
    String(result.status),
    result.code,
    ms.toFixed(1),
    mb.toFixed(1),
  ]);
}

const deepest = BODIES['{"a": × 20,000 (closed)'];
const { result: health, mb: concurrentMb } = await measured(async () => {
  const attacks = Array.from({ length: 3 }, () => send(deepest));
  const t0 = performance.now();
  const res = await fetch(`${base}/healthz`);
  const healthMs = performance.now() - t0;
  const statuses = await Promise.all(attacks.map((a) => a.then((r) => r.status)));
  return { status: res.status, healthMs, statuses };
});
rows.push([
  "/healthz during 3 deep bodies",
  "",
  String(health.status),
  `attacks: ${health.statuses.join(",")}`,
  health.healthMs.toFixed(1),
  concurrentMb.toFixed(1),
]);

const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join("  "));

await server.stop(true);
await ctx.db.close();
await scratch.drop();
