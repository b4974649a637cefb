/** Snapchat specifics beyond the conformance suite: placements as variants, Spotlight rules, encrypted uploads. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PluginContext } from "../../src/platform/sdk.ts";
import snapchat from "../../plugins/snapchat/index.ts";
import { createSnapchatEmulator } from "../../plugins/snapchat/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { fakeMp4, makeJpeg } from "../support/media-fixtures.ts";

const emulator = createSnapchatEmulator();
let rig: OAuthRig<typeof emulator>;
let ctx: PluginContext;

const MP4 = fakeMp4(4096);
const JPEG = makeJpeg(1, 1, 0);

beforeAll(async () => {
  ({ rig, ctx } = await connectOne(emulator, {
    authorizePath: "/login/oauth2/authorize",
    tokenPath: "/login/oauth2/access_token",
    media: (req) =>
      new URL(req.url).pathname.endsWith(".jpg")
        ? new Response(JPEG, { headers: { "content-type": "image/jpeg" } })
        : new Response(MP4, { headers: { "content-type": "video/mp4" } }),
    mediaMaxBytes: 1024 * 1024,
    username: "sandbox.snap",
  }));
});
afterAll(() => rig.stop());

const snap = (
  content: string,
  file: string,
  type: "image" | "video",
  variant: string | null,
  options: Record<string, unknown> = {},
) => job(content, { options, variant, media: [{ url: `${rig.mediaUrl}/${file}`, type }] });

test("placements fan one target out: a Spotlight and a public Story of the same video", async () => {
  const options = { placements: ["spotlight", "public_story"] as ("spotlight" | "public_story")[], locale: "fr_FR" };
  expect(snapchat.variants!(options)).toEqual(["spotlight", "public_story"]);
  for (const variant of snapchat.variants!(options)!) {
    const out = await snapchat.publish!(ctx, snap("#crier clip", "v.mp4", "video", variant, options));
    expect(out).toMatchObject({ kind: "published", url: "https://www.snapchat.com/add/sandbox.snap" });
  }
  const [spot, story] = emulator.posts().slice(-2);
  expect(spot.options).toEqual({ placement: "spotlight", locale: "fr_FR" });
  expect(story.options).toEqual({ placement: "public_story" });
});

test("a Spotlight of an image is refused for good; a Story of it is fine", async () => {
  expect(await snapchat.publish!(ctx, snap("pic", "a.jpg", "image", "spotlight"))).toMatchObject({
    kind: "permanent",
    code: "spotlight_video_only",
  });
  expect((await snapchat.publish!(ctx, snap("pic", "a.jpg", "image", "public_story"))).kind).toBe("published");
});

// A description over 160 characters is refused at creation (tests/modules/posts/platform-limits.test.ts).

test("Snap's Create Media requires a name beside type, key and iv; the plugin sends one", async () => {
  const create = (body: Record<string, unknown>) =>
    fetch(`${rig.served.url}/v1/public_profiles/${ctx.account.remoteId}/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${String(ctx.credentials.access_token)}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const key = Buffer.alloc(32, 1).toString("base64");
  const iv = Buffer.alloc(16, 2).toString("base64");
  const nameless = await create({ type: "VIDEO", key, iv });
  expect(nameless.status).toBe(400);
  expect(await nameless.json()).toMatchObject({ request_status: "ERROR", error_code: "INVALID_REQUEST" });
  expect((await create({ type: "VIDEO", name: "clip", key, iv })).status).toBe(200);
});
