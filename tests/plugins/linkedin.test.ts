/** LinkedIn specifics beyond the conformance suite: little-text escaping, multi-image posts, video size bounds. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PluginContext } from "../../src/platform/sdk.ts";
import linkedin, { escapeLittleText } from "../../plugins/linkedin/index.ts";
import { createLinkedInEmulator, type LinkedInEmulator } from "../../plugins/linkedin/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";

let emulator: LinkedInEmulator;
let rig: OAuthRig<LinkedInEmulator>;
let ctx: PluginContext;

beforeAll(async () => {
  ({ rig, emulator, ctx } = await connectOne(createLinkedInEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    media: (req) =>
      new URL(req.url).pathname.endsWith(".png")
        ? new Response(new Uint8Array(100), { headers: { "content-type": "image/png" } })
        : new Response(new Uint8Array(1000), { headers: { "content-type": "video/mp4" } }),
    mediaMaxBytes: 1024 * 1024,
  }));
});
afterAll(() => rig.stop());

const png = () => ({ url: `${rig.mediaUrl}/a.png`, type: "image" as const });

test("reserved little-text characters are escaped, so the post reads as written", async () => {
  expect(escapeLittleText("a (b) #c @d_e")).toBe("a \\(b\\) \\#c \\@d\\_e");
  const out = await linkedin.publish!(ctx, job("Launch (v2) #news @team [beta]"));
  expect(out.kind).toBe("published");
  expect(emulator.posts().at(-1)!.text).toBe("Launch (v2) #news @team [beta]");
});

test("several images go as one multiImage post", async () => {
  const out = await linkedin.publish!(ctx, job("three", { media: [png(), png(), png()] }));
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.platformPostId).toStartWith("urn:li:share:");
  expect(out.url).toBe(`https://www.linkedin.com/feed/update/${out.platformPostId}`);
  expect(emulator.posts().at(-1)!.media).toHaveLength(3);
});

test("a video under 75 KB is refused before uploading", async () => {
  expect(
    await linkedin.publish!(ctx, job("tiny", { media: [{ url: `${rig.mediaUrl}/v.mp4`, type: "video" }] })),
  ).toMatchObject({ kind: "permanent", code: "media_size" });
});

test("media that cannot be read fails for good, with no post", async () => {
  const before = emulator.posts().length;
  const out = await linkedin.publish!(
    ctx,
    job("unreadable", { media: [{ url: "ftp://127.0.0.1/a.png", type: "image" }] }),
  );
  expect(out).toMatchObject({ kind: "permanent", code: "media_unreadable" });
  expect(emulator.posts().length).toBe(before);
});

test("metrics read likes and comments", async () => {
  const out = await linkedin.publish!(ctx, job("measured"));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { likes: 7, comments: 2 });
  expect((await linkedin.metrics!(ctx, [out.platformPostId]))[out.platformPostId]).toMatchObject({
    likes: 7,
    comments: 2,
    views: null,
  });
});
