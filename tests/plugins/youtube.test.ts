/** YouTube specifics beyond the conformance suite: title rules, Shorts URLs, a video YouTube rejects, refresh. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createMediaAccess } from "../../src/platform/media.ts";
import { providerFor } from "../../src/platform/provider.ts";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import youtube, { titleOf } from "../../plugins/youtube/index.ts";
import { createYouTubeEmulator, type YouTubeEmulator } from "../../plugins/youtube/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: YouTubeEmulator;
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let h: ListeningHarness;
let ctx: PluginContext;

const MP4 = new Uint8Array(4096);
MP4.set([0, 0, 0, 0x20, ...Buffer.from("ftypisom")]);

beforeAll(async () => {
  emulator = createYouTubeEmulator();
  served = serveEmulator(emulator);
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => new Response(new URL(req.url).pathname === "/good.mp4" ? MP4 : new Uint8Array(4096), { headers: { "content-type": "video/mp4" } }),
  });
  h = await listeningHarness({
    CRIER_YOUTUBE_API_URL: served.url,
    CRIER_YOUTUBE_AUTHORIZE_URL: `${served.url}/oauth/authorize`,
    CRIER_YOUTUBE_TOKEN_URL: `${served.url}/token`,
    CRIER_YOUTUBE_CLIENT_ID: "sandbox",
    CRIER_YOUTUBE_CLIENT_SECRET: "sandbox",
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/youtube", { token });
  expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  expect(row.username).toBe("@sandboxtube");
  ctx = providerFor(h.ctx, row, { sandbox: false, media: createMediaAccess({ maxBytes: 1024 * 1024, allowAddress: () => true }) }).context;
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

const job = (content: string, video: Record<string, unknown> = {}, options: Record<string, unknown> = {}) =>
  ({ content, options, idempotencyToken: crypto.randomUUID(), media: [{ url: `http://127.0.0.1:${media.port}/good.mp4`, type: "video" as const, ...video }] });

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
  const short = await settle(await youtube.publish!(ctx, job("Short one", { duration: 30, width: 1080, height: 1920 }, { privacy_status: "unlisted", ai_generated: true })));
  if (short.kind !== "published") throw new Error(short.kind);
  expect(short.url).toBe(`https://www.youtube.com/shorts/${short.platformPostId}`);
  expect(emulator.posts().at(-1)!.options).toEqual({ privacy_status: "unlisted", ai_generated: true });
  const long = await settle(await youtube.publish!(ctx, job("Long one", { duration: 600, width: 1920, height: 1080 })));
  if (long.kind !== "published") throw new Error(long.kind);
  expect(long.url).toBe(`https://www.youtube.com/watch?v=${long.platformPostId}`);
});

test("a video YouTube cannot process fails for good", async () => {
  const bad = { ...job("broken"), media: [{ url: `http://127.0.0.1:${media.port}/bad.mp4`, type: "video" as const }] };
  expect(await settle(await youtube.publish!(ctx, bad))).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
});

test("an expired access token is refreshed before uploading; the refresh token is kept", async () => {
  const refreshToken = ctx.credentials.refresh_token;
  emulator.expireTokens();
  await ctx.saveCredentials({ ...ctx.credentials, expires_at: new Date(Date.now() - 1000).toISOString() });
  const out = await settle(await youtube.publish!(ctx, job("after refresh")));
  expect(out.kind).toBe("published");
  expect(ctx.credentials.refresh_token).toBe(refreshToken);
});
