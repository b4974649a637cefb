/**
 * Workflows and media, end to end on a sandbox profile: source media carried to a destination through
 * the media guard, media that cannot be carried (a YouTube watch page) skipped when queued, destination
 * rules (Instagram needs media, Reddit takes no video) skipped with their reason, a copy whose post
 * fails shown as failed, and the Reddit and Instagram destination settings arriving at the platform.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createEngine } from "../../src/engine/scheduler.ts";
import { makeMp4, makePng } from "../support/media-fixtures.ts";
import { makeVideo } from "../support/media-files.ts";
import { workflowHarness, type WorkflowHarness } from "../support/workflow-kit.ts";

let h: WorkflowHarness;
let src: string;
let tg: string;
let ig: string;
let rd: string;

beforeAll(async () => {
  h = await workflowHarness();
  src = await h.connect("bluesky", { handle: "media.source.test" });
  tg = await h.connect("telegram", { channel: "@wf_media" });
  ig = await h.connect("instagram");
  rd = await h.connect("reddit");
});
afterAll(() => h.stop());
afterEach(async () => {
  for (const w of (await h.request("GET", "/v1/workflows?limit=100", { token: h.token })).body.data) {
    if (w.is_active) await h.request("PATCH", `/v1/workflows/${w.id}`, { token: h.token, body: { is_active: false } });
  }
});

const tick = () => h.clock.advance(1000);
const REDDIT = { reddit: { subreddit: "crier_tests" } };

async function workflow(body: Record<string, unknown>) {
  const res = await h.request("POST", "/v1/workflows", {
    token: h.token,
    body: { name: "media", source_account_id: src, is_active: true, ...body },
  });
  expect(res.status).toBe(201);
  tick();
  return res.body.data as { id: string };
}
const items = async (id: string) =>
  (await h.request("GET", `/v1/workflows/${id}/items`, { token: h.token })).body.data as any[];
const destination = (item: any, accountId: string) => item.destinations.find((d: any) => d.account_id === accountId);
const post = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token: h.token })).body.data;
/**
 * Runs the engine until idle, then lets submitted targets' status checks fall due until nothing is in
 * flight on the platforms (a check that timed out on a loaded machine waits out its lease first).
 */
async function settle() {
  const busy = async () =>
    (await h.request("GET", "/v1/posts?limit=100", { token: h.token })).body.data.some((p: any) =>
      p.targets.some((t: any) => ["pending", "processing", "submitted"].includes(t.status)),
    );
  for (let i = 0; i < 4 || (i < 16 && (await busy())); i++) {
    await h.engine.runUntilIdle();
    h.clock.advance(11_000);
  }
  await h.engine.runUntilIdle();
}
const emulated = (platform: string, marker: string) =>
  h
    .emulator(platform)
    .posts()
    .filter((p) => p.text.includes(marker));

describe("media carried over", () => {
  test("a source image reaches Telegram: the engine fetches the source's file through the media guard", async () => {
    const png = makePng(64, 48);
    const wf = await workflow({ target_account_ids: [tg] });
    await h.native(src, "m1 photo of the day", [{ url: h.serveFile(png, "image/png"), type: "image" }]);
    tick();
    await h.engine.runUntilIdle();

    const [copy] = emulated("telegram", "m1");
    expect(copy.media).toEqual([
      expect.objectContaining({ type: "image", contentType: "image/png", size: png.length }),
    ]);
    const [item] = await items(wf.id);
    const d = destination(item, tg);
    expect(d.status).toBe("posted");
    // The copy names the source's own file (the Bluesky blob), not a page.
    const p = await post(d.post_id);
    expect(p.status).toBe("published");
    expect(p.media).toEqual([
      expect.objectContaining({ type: "image", url: expect.stringContaining("com.atproto.sync.getBlob") }),
    ]);

    // A server's engine (no test override) opens the sandbox blob from the profile's emulator in process
    // (emulators are not served to the network), and still refuses a loopback file: the guard is intact.
    const server = createEngine(h.ctx, { random: () => 0.5 });
    const inProcess = await h.request("POST", "/v1/posts", {
      token: h.token,
      body: { content: "m1 again", media: p.media, targets: [{ account_id: tg }] },
    });
    expect(inProcess.status).toBe(201);
    await server.runUntilIdle();
    expect((await post(inProcess.body.data.id)).status).toBe("published");
    const again = await h.request("POST", "/v1/posts", {
      token: h.token,
      body: {
        content: "m1 from loopback",
        media: [{ url: h.serveFile(png, "image/png"), type: "image" }],
        targets: [{ account_id: tg }],
      },
    });
    expect(again.status).toBe(201);
    await server.runUntilIdle();
    const refused = await post(again.body.data.id);
    expect(refused.status).toBe("failed");
    expect(refused.targets[0].error).toContain("loopback");
    expect(emulated("telegram", "m1 from loopback")).toEqual([]);
  });

  test("a YouTube video cannot be carried (the API gives a watch page): skipped when queued, with the reason", async () => {
    const yt = await h.connect("youtube");
    const wf = await workflow({ source_account_id: yt, target_account_ids: [tg] });
    // The YouTube emulator stamps uploads with the wall clock: the video must come after last_enabled_at.
    await Bun.sleep(Math.max(0, h.clock.now().getTime() - Date.now() + 20));
    await h.native(yt, "y2 my new video", [{ url: h.serveFile(makeMp4(4096), "video/mp4"), type: "video" }], {
      title: "y2 my new video",
    });
    tick();
    await h.engine.runUntilIdle();

    expect(emulated("telegram", "y2")).toEqual([]);
    const [item] = await items(wf.id);
    expect(destination(item, tg)).toMatchObject({
      status: "skipped",
      reason_code: "media_not_downloadable",
      post_id: null,
    });
    expect(destination(item, tg).reason).toContain("youtube.com/watch");
  });
});

describe("destination rules", () => {
  test("a text-only post is skipped for Instagram (media_required); Reddit gets its flair and markings", async () => {
    const flair = "2c6b0b4e-1a2b-11ee-9f3a-0e1d3c5a7b9d";
    const wf = await workflow({
      target_account_ids: [ig, rd],
      settings: {
        destination_publish_settings: {
          [rd]: {
            reddit: {
              subreddit: "crier_tests",
              flair_id: flair,
              flair_text: "Release",
              nsfw: true,
              spoiler: true,
              send_replies: false,
            },
          },
        },
      },
    });
    await h.native(src, "t3 release notes are out");
    tick();
    await settle();

    const [item] = await items(wf.id);
    expect(destination(item, ig)).toMatchObject({ status: "skipped", reason_code: "media_required" });
    expect(destination(item, ig).reason).toContain("Instagram");
    expect(emulated("instagram", "t3")).toEqual([]);
    expect(destination(item, rd).status).toBe("posted");
    const [copy] = emulated("reddit", "t3");
    expect(copy.options).toEqual({
      subreddit: "crier_tests",
      flair_id: flair,
      flair_text: "Release",
      nsfw: true,
      spoiler: true,
      sendreplies: false,
    });
  });

  test("a video goes to Instagram as a trial reel and is skipped for Reddit, which takes no video", async () => {
    const wf = await workflow({
      target_account_ids: [ig, rd],
      settings: {
        destination_publish_settings: { [ig]: { instagram: { publish_as_trial_reel: true } }, [rd]: REDDIT },
      },
    });
    // A real Reel: Instagram takes 3 s to 15 min at 23 to 60 fps, which its emulator checks from the file.
    const clip = makeVideo({ width: 360, height: 640, seconds: 4, fps: 30 });
    await h.native(src, "v4 behind the scenes", [{ url: h.serveFile(clip, "video/mp4"), type: "video" }]);
    tick();
    await settle();

    const [item] = await items(wf.id);
    expect(destination(item, rd)).toMatchObject({ status: "skipped", reason_code: "media_type_not_supported" });
    expect(destination(item, rd).reason).toContain("Reddit does not take videos");
    expect(emulated("reddit", "v4")).toEqual([]);
    expect(destination(item, ig).status).toBe("posted");
    expect((await post(destination(item, ig).post_id)).status).toBe("published");
    const [reel] = emulated("instagram", "v4");
    expect(reel.media).toEqual([{ type: "video" }]);
    // Published as a Reel (the emulator records the placement it received) with the trial's parameters.
    expect(reel.options).toMatchObject({ placement: "reels", trial_params: { graduation_strategy: "MANUAL" } });
  });
});

describe("copies that fail", () => {
  test("the post a workflow item became fails: the items route shows failed with the post's reason", async () => {
    const wf = await workflow({ target_account_ids: [tg] });
    // Telegram answers 500 to every attempt the engine makes: the post fails once its retries run out.
    const attempts = h.ctx.config.publishMaxAttempts;
    h.emulator("telegram").failNext({ kind: "server_error", on: "sendMessage", times: attempts });
    await h.native(src, "x5 this copy will fail");
    tick();
    for (let i = 0; i <= attempts; i++) {
      await h.engine.runUntilIdle();
      h.clock.advance(20 * 60_000);
    }

    const [item] = await items(wf.id);
    const d = destination(item, tg);
    const p = await post(d.post_id);
    expect(p.status).toBe("failed");
    expect(d).toMatchObject({ status: "failed", reason_code: p.targets[0].error_code, reason: p.targets[0].error });
    expect(d.reason).toContain("500");
    expect(emulated("telegram", "x5")).toEqual([]);
  });
});
