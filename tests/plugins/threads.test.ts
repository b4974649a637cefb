/** Threads specifics beyond the conformance suite: carousels, reply chains, media Threads cannot download, insights. */
import { makeImage, makeVideo } from "../support/media-files.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import threads from "../../plugins/threads/index.ts";
import { createThreadsEmulator, type ThreadsEmulator } from "../../plugins/threads/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { countText } from "../../src/platform/text.ts";

let emulator: ThreadsEmulator;
let rig: OAuthRig<ThreadsEmulator>;
let ctx: PluginContext;

beforeAll(async () => {
  // Real files (sharp, ffmpeg), as Threads reads what it downloads; slow.mp4 runs at 15 fps (23 at least).
  const jpg = await makeImage({ width: 400, height: 300 });
  const mp4 = makeVideo({ width: 360, height: 640, seconds: 1 });
  const slow = makeVideo({ width: 360, height: 640, seconds: 1, fps: 15 });
  ({ rig, emulator, ctx } = await connectOne(createThreadsEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/access_token",
    media: (req) => {
      const p = new URL(req.url).pathname;
      if (p.endsWith(".jpg")) return new Response(jpg, { headers: { "content-type": "image/jpeg" } });
      if (p.endsWith(".mp4"))
        return new Response(p === "/slow.mp4" ? slow : mp4, { headers: { "content-type": "video/mp4" } });
      return new Response("gone", { status: 404 });
    },
    username: "sandbox.threads",
  }));
});
afterAll(() => rig.stop());

const url = (f: string) => `${rig.mediaUrl}/${f}`;
async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await threads.checkStatus!(ctx, out.handle);
  return out;
}

test("a carousel of photos and a video is one post", async () => {
  const out = await settle(
    await threads.publish!(
      ctx,
      job("album", {
        media: [
          { url: url("a.jpg"), type: "image" },
          { url: url("b.jpg"), type: "image" },
          { url: url("c.mp4"), type: "video" },
        ],
      }),
    ),
  );
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.url).toStartWith("https://www.threads.com/@sandbox.threads/post/");
  expect(
    emulator
      .posts()
      .at(-1)!
      .media.map((m) => m.type),
  ).toEqual(["image", "image", "video"]);
});

test("a thread is a reply chain", async () => {
  const first = await settle(await threads.publish!(ctx, job("one")));
  if (first.kind !== "published") throw new Error(first.kind);
  const second = await settle(
    await threads.publish!(ctx, job("two", { replyTo: { platformPostId: first.platformPostId } })),
  );
  expect(second.kind).toBe("published");
  expect(emulator.posts().at(-1)!.replyTo).toBe(first.platformPostId);
});

test("media Threads cannot download fail the post for good", async () => {
  const out = await settle(
    await threads.publish!(ctx, job("missing", { media: [{ url: url("missing.png"), type: "image" }] })),
  );
  expect(out).toMatchObject({ kind: "permanent", code: "FAILED_DOWNLOADING_IMAGE" });
});

test("a video under Threads' 23 fps fails its container with INVALID_FRAME_RATE", async () => {
  const out = await settle(
    await threads.publish!(ctx, job("slow", { media: [{ url: url("slow.mp4"), type: "video" }] })),
  );
  expect(out).toMatchObject({ kind: "permanent", code: "INVALID_FRAME_RATE" });
});

test("insights become views, likes, replies and reposts", async () => {
  const out = await settle(await threads.publish!(ctx, job("measured")));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { views: 40, likes: 4, reposts: 2 });
  const m = await threads.metrics!(ctx, [out.platformPostId]);
  expect(m[out.platformPostId]).toMatchObject({ views: 40, likes: 4, shares: 2, comments: 0 });
});

test("emoji count as their UTF-8 bytes within the 500: Crier refuses what Threads would", async () => {
  const over = "x".repeat(497) + "👍";
  expect(countText(over, threads.textLimit.unit)).toBe(501);
  expect(countText("x".repeat(496) + "👍", threads.textLimit.unit)).toBe(500);
  // The emulator counts as Threads documents it: 497 characters and an emoji are 501.
  expect(await threads.publish!(ctx, job(over))).toMatchObject({ kind: "permanent" });
  expect(await settle(await threads.publish!(ctx, job("x".repeat(496) + "👍")))).toMatchObject({
    kind: "published",
  });
});

test("a post with more than 5 links is refused by Threads for good", async () => {
  const links = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/${i}`).join(" ");
  expect(await threads.publish!(ctx, job(links(6)))).toMatchObject({ kind: "permanent" });
  expect(await settle(await threads.publish!(ctx, job(links(5))))).toMatchObject({ kind: "published" });
});

test("connecting asks only for the permissions Crier's requests use (App Review refuses unused ones)", () => {
  if (threads.connect?.mode !== "oauth_authorization_url") throw new Error("unexpected connect flow");
  const url = new URL(
    threads.connect.authorizationUrl(
      { http: ctx.http, settings: ctx.settings, log: ctx.log, now: () => new Date() },
      { state: "s", redirectUri: "http://127.0.0.1/cb", codeVerifier: "v" },
    ),
  );
  expect(url.searchParams.get("scope")!.split(",").sort()).toEqual([
    "threads_basic",
    "threads_content_publish",
    "threads_manage_insights",
    "threads_manage_replies",
  ]);
});
