/** Snapchat specifics beyond the conformance suite: placements as variants, Spotlight rules, encrypted uploads. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PluginContext } from "../../src/platform/sdk.ts";
import snapchat from "../../plugins/snapchat/index.ts";
import { createSnapchatEmulator } from "../../plugins/snapchat/emulator.ts";
import { oauthRig, type OAuthRig } from "./support.ts";

const emulator = createSnapchatEmulator();
let rig: OAuthRig<typeof emulator>;
let ctx: PluginContext;

const MP4 = new Uint8Array(4096);
MP4.set([0, 0, 0, 0x20, ...Buffer.from("ftypisom")]);
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9]);

beforeAll(async () => {
  rig = await oauthRig(emulator, {
    authorizePath: "/login/oauth2/authorize",
    tokenPath: "/login/oauth2/access_token",
    media: (req) => new URL(req.url).pathname.endsWith(".jpg")
      ? new Response(JPEG, { headers: { "content-type": "image/jpeg" } })
      : new Response(MP4, { headers: { "content-type": "video/mp4" } }),
    mediaMaxBytes: 1024 * 1024,
  });
  expect(rig.connectPage.html).toContain("Account connected");
  const [row] = rig.rows;
  expect(row.username).toBe("sandbox.snap");
  ctx = rig.context(row);
});
afterAll(() => rig.stop());

const job = (content: string, file: string, type: "image" | "video", variant: string | null, options: Record<string, unknown> = {}) =>
  ({ content, options, variant, idempotencyToken: crypto.randomUUID(), media: [{ url: `${rig.mediaUrl}/${file}`, type }] });

test("placements fan one target out: a Spotlight and a public Story of the same video", async () => {
  const options = { placements: ["spotlight", "public_story"] as ("spotlight" | "public_story")[], locale: "fr_FR" };
  expect(snapchat.variants!(options)).toEqual(["spotlight", "public_story"]);
  for (const variant of snapchat.variants!(options)!) {
    const out = await snapchat.publish!(ctx, job("#crier clip", "v.mp4", "video", variant, options));
    expect(out).toMatchObject({ kind: "published", url: "https://www.snapchat.com/add/sandbox.snap" });
  }
  const [spot, story] = emulator.posts().slice(-2);
  expect(spot.options).toEqual({ placement: "spotlight", locale: "fr_FR" });
  expect(story.options).toEqual({ placement: "public_story" });
});

test("a Spotlight of an image is refused for good; a Story of it is fine", async () => {
  expect(await snapchat.publish!(ctx, job("pic", "a.jpg", "image", "spotlight"))).toMatchObject({ kind: "permanent", code: "spotlight_video_only" });
  expect((await snapchat.publish!(ctx, job("pic", "a.jpg", "image", "public_story"))).kind).toBe("published");
});

// A description over 160 characters is refused at creation (tests/modules/platform-limits.test.ts).
