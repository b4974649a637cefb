import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "../../support/harness.ts";
import { createEngine, type Engine } from "../../../src/engine/scheduler.ts";

let h: Harness;
let engine: Engine | undefined;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await engine?.stop();
  await h.close();
});

test("/readyz reports the database round trip, the engine's last tick and its claims in flight", async () => {
  engine = createEngine(h.ctx, { stallAfterMs: 1000 });
  h.ctx.dispatch = engine;
  engine.startTimer();
  await Bun.sleep(300);
  const res = await h.request("GET", "/readyz");
  expect(res.status).toBe(200);
  expect(res.body.status).toBe("ok");
  expect(res.body.database_ms).toBeGreaterThanOrEqual(0);
  expect(res.body.engine.claims_in_flight).toBe(0);
  expect(res.body.engine.stalled).toBe(false);
  expect(Date.now() - Date.parse(res.body.engine.last_tick_at)).toBeLessThan(1500);
  await engine.stop();
  engine = undefined;
});

test("/readyz is 503 once this copy's engine has not finished a tick for longer than allowed (a wedged worker)", async () => {
  // A tick hook that never returns wedges every tick after the first (croner does not overlap them).
  let wedged = false;
  engine = createEngine(h.ctx, {
    stallAfterMs: 1000,
    onTick: () => (wedged ? new Promise<void>(() => {}) : undefined),
  });
  h.ctx.dispatch = engine;
  engine.startTimer();
  await Bun.sleep(300);
  expect((await h.request("GET", "/readyz")).status).toBe(200);
  wedged = true;
  await Bun.sleep(2600);
  const t0 = performance.now();
  const res = await h.request("GET", "/readyz");
  expect(performance.now() - t0).toBeLessThan(1000);
  expect(res.status).toBe(503);
  expect(res.body.status).toBe("unavailable");
  expect(res.body.engine.stalled).toBe(true);
  expect(res.body.problems.join(" ")).toContain("engine has not finished a tick");
  expect(res.body.database_ms).toBeGreaterThanOrEqual(0);
});

test("/readyz without an engine in this copy (serve --no-scheduler) says so and is ready", async () => {
  h.ctx.dispatch = undefined;
  const res = await h.request("GET", "/readyz");
  expect(res.status).toBe(200);
  expect(res.body.engine).toBeNull();
});

test("/readyz names the media tools it found", async () => {
  const res = await h.request("GET", "/readyz");
  expect(res.status).toBe(200);
  expect(res.body.media_tools).toEqual({ sharp: true, ffmpeg: true, ffprobe: true, missing: [] });
});

test("/readyz without ffmpeg stays ready and says what does not work without it", async () => {
  const bare = await createHarness({ ffmpegPath: "/nonexistent/ffmpeg", ffprobePath: "/nonexistent/ffprobe" });
  try {
    const res = await bare.request("GET", "/readyz");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ok");
    expect(res.body.problems).toEqual([]);
    expect(res.body.media_tools).toMatchObject({ sharp: true, ffmpeg: false, ffprobe: false });
    const said = res.body.media_tools.missing.join("\n");
    expect(said).toContain("FFMPEG_PATH");
    expect(said).toContain("MOV/WebM → MP4");
    expect(said).toContain("poster frames");
    expect(said).toContain("FFPROBE_PATH");
    expect(said).toContain("video facts");
  } finally {
    await bare.close();
  }
});
