/** TikTok specifics beyond the conformance suite: chunk plan, privacy options, drafts, photo pulls, 19-digit ids. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import tiktok, { chunkPlan } from "../../plugins/tiktok/index.ts";
import { createTikTokEmulator, type TikTokEmulator } from "../../plugins/tiktok/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { fakeMp4 } from "../support/media-fixtures.ts";

const MB = 1024 * 1024;
let emulator: TikTokEmulator;
let rig: OAuthRig<TikTokEmulator>;
let ctx: PluginContext;

const MP4 = fakeMp4(4096);

beforeAll(async () => {
  ({ rig, emulator, ctx } = await connectOne(createTikTokEmulator(), {
    authorizePath: "/v2/auth/authorize/",
    tokenPath: "/v2/oauth/token/",
    clientIdSetting: "CLIENT_KEY",
    media: (req) => {
      const p = new URL(req.url).pathname;
      if (p.endsWith(".jpg")) return new Response(new Uint8Array(64), { headers: { "content-type": "image/jpeg" } });
      if (p.endsWith(".png")) return new Response(new Uint8Array(64), { headers: { "content-type": "image/png" } });
      return new Response(MP4, { headers: { "content-type": "video/mp4" } });
    },
    mediaMaxBytes: 10 * MB,
    username: "sandbox_tiktoker",
  }));
});
afterAll(() => rig.stop());

const url = (f: string) => `${rig.mediaUrl}/${f}`;
const post = (
  content: string,
  items: { f: string; type: "image" | "video" }[],
  options: Record<string, unknown> = {},
) => job(content, { options, media: items.map((i) => ({ url: url(i.f), type: i.type })) });
async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await tiktok.checkStatus!(ctx, out.handle);
  return out;
}

test("chunk plan: one piece up to 64 MB, then 10 MB chunks with the remainder in the last", () => {
  expect(chunkPlan(3 * MB)).toEqual({ chunkSize: 3 * MB, count: 1 });
  expect(chunkPlan(64 * MB)).toEqual({ chunkSize: 64 * MB, count: 1 });
  expect(chunkPlan(105 * MB)).toEqual({ chunkSize: 10 * MB, count: 10 });
});

test("a public video gets its exact 19-digit id, though TikTok sends it as a bare number", async () => {
  const out = await settle(
    await tiktok.publish!(
      ctx,
      post("dance", [{ f: "v.mp4", type: "video" }], { ai_generated: true, video_cover_timestamp_ms: 1000 }),
    ),
  );
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.platformPostId).toMatch(/^\d{19}$/);
  expect(emulator.posts().at(-1)).toMatchObject({
    id: out.platformPostId,
    options: { privacy_level: "PUBLIC_TO_EVERYONE", ai_generated: true },
  });
  expect(out.url).toBe(`https://www.tiktok.com/@sandbox_tiktoker/video/${out.platformPostId}`);
});

test("an unaudited app posts privately; asking for public is refused for good", async () => {
  emulator.setPrivacyOptions(["SELF_ONLY"]);
  try {
    const out = await settle(await tiktok.publish!(ctx, post("private", [{ f: "v.mp4", type: "video" }])));
    expect(out.kind).toBe("published");
    expect(emulator.posts().at(-1)!.options).toMatchObject({ privacy_level: "SELF_ONLY" });
    expect(
      await tiktok.publish!(
        ctx,
        post("public please", [{ f: "v.mp4", type: "video" }], { privacy_level: "PUBLIC_TO_EVERYONE" }),
      ),
    ).toMatchObject({ kind: "permanent", code: "privacy_level_option_mismatch" });
  } finally {
    emulator.setPrivacyOptions(["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]);
  }
});

test("publish_mode draft lands in the creator's inbox", async () => {
  const out = await settle(
    await tiktok.publish!(ctx, post("draft", [{ f: "v.mp4", type: "video" }], { publish_mode: "draft" })),
  );
  expect(out).toMatchObject({ kind: "published", url: null });
  expect(emulator.posts().at(-1)!.options).toEqual({ publish_mode: "draft" });
});

test("photos are pulled by TikTok; a PNG fails for good", async () => {
  const ok = await settle(
    await tiktok.publish!(
      ctx,
      post("photos", [
        { f: "a.jpg", type: "image" },
        { f: "b.jpg", type: "image" },
      ]),
    ),
  );
  expect(ok.kind).toBe("published");
  expect(emulator.posts().at(-1)!.media).toHaveLength(2);
  expect(await settle(await tiktok.publish!(ctx, post("png", [{ f: "a.png", type: "image" }])))).toMatchObject({
    kind: "permanent",
    code: "picture_format_unsupported",
  });
});
