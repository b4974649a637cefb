/** YouTube specifics beyond the conformance suite: title rules, Shorts URLs, a video YouTube rejects, refresh. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { MediaItem, Outcome, PluginContext } from "../../src/platform/sdk.ts";
import youtube, { titleOf } from "../../plugins/youtube/index.ts";
import { createYouTubeEmulator, type YouTubeEmulator } from "../../plugins/youtube/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { fakeMp4 } from "../support/media-fixtures.ts";
import { optionsForPlugin } from "../../src/platform/host/options.ts";

let emulator: YouTubeEmulator;
let rig: OAuthRig<YouTubeEmulator>;
let ctx: PluginContext;

const MP4 = fakeMp4(4096);

beforeAll(async () => {
  ({ rig, emulator, ctx } = await connectOne(createYouTubeEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/token",
    media: (req) =>
      new Response(new URL(req.url).pathname === "/good.mp4" ? MP4 : new Uint8Array(4096), {
        headers: { "content-type": "video/mp4" },
      }),
    mediaMaxBytes: 1024 * 1024,
    username: "@sandboxtube",
  }));
});
afterAll(() => rig.stop());

const upload = (content: string, video: Partial<MediaItem> = {}, options: Record<string, unknown> = {}) =>
  job(content, { options, media: [{ url: `${rig.mediaUrl}/good.mp4`, type: "video", ...video }] });

async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await youtube.checkStatus!(ctx, out.handle);
  return out;
}

test("titles come from options or the first line, without < and >, at most 100", () => {
  expect(titleOf({ content: "a <b> c\nrest", options: {} })).toBe("a b c");
  expect(titleOf({ content: "x".repeat(150), options: {} })).toHaveLength(100);
  expect(titleOf({ content: "body", options: { title: "Given" } })).toBe("Given");
});

test("a short vertical video gets a Shorts URL; a long one a watch URL; options reach YouTube", async () => {
  const short = await settle(
    await youtube.publish!(
      ctx,
      upload(
        "Short one",
        { duration: 30, width: 1080, height: 1920 },
        { privacy_status: "unlisted", ai_generated: true },
      ),
    ),
  );
  if (short.kind !== "published") throw new Error(short.kind);
  expect(short.url).toBe(`https://www.youtube.com/shorts/${short.platformPostId}`);
  expect(emulator.posts().at(-1)!.options).toEqual({ privacy_status: "unlisted", ai_generated: true });
  const long = await settle(
    await youtube.publish!(ctx, upload("Long one", { duration: 600, width: 1920, height: 1080 })),
  );
  if (long.kind !== "published") throw new Error(long.kind);
  expect(long.url).toBe(`https://www.youtube.com/watch?v=${long.platformPostId}`);
});

test("a video YouTube cannot process fails for good", async () => {
  const bad = { ...upload("broken"), media: [{ url: `${rig.mediaUrl}/bad.mp4`, type: "video" as const }] };
  expect(await settle(await youtube.publish!(ctx, bad))).toMatchObject({
    kind: "permanent",
    code: "video_processing_failed",
  });
});

test("an expired access token is refreshed before uploading; the refresh token is kept", async () => {
  const refreshToken = ctx.credentials.refresh_token;
  emulator.expireTokens();
  await ctx.saveCredentials({ ...ctx.credentials, expires_at: new Date(Date.now() - 1000).toISOString() });
  const out = await settle(await youtube.publish!(ctx, upload("after refresh")));
  expect(out.kind).toBe("published");
  expect(ctx.credentials.refresh_token).toBe(refreshToken);
});

test("the hosted service's option names reach YouTube: privacy unlisted stays unlisted, description is the description", async () => {
  const options = optionsForPlugin(youtube, { privacy: "unlisted", description: "About this video" });
  const out = await settle(await youtube.publish!(ctx, upload("Aliased", { duration: 600 }, options)));
  if (out.kind !== "published") throw new Error(out.kind);
  expect(emulator.posts().at(-1)!.options).toMatchObject({ privacy_status: "unlisted" });
  expect(JSON.stringify(emulator.posts().at(-1))).toContain("About this video");
});
