/** Instagram specifics beyond the conformance suite: caption rules, JPEG only, Reels, carousels, insights. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { providerFor } from "../../src/platform/provider.ts";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import instagram, { captionProblem } from "../../plugins/instagram/index.ts";
import { createInstagramEmulator, type InstagramEmulator } from "../../plugins/instagram/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: InstagramEmulator;
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let h: ListeningHarness;
let ctx: PluginContext;

beforeAll(async () => {
  emulator = createInstagramEmulator();
  served = serveEmulator(emulator);
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => {
      const p = new URL(req.url).pathname;
      const type = p.endsWith(".jpg") ? "image/jpeg" : p.endsWith(".png") ? "image/png" : "video/mp4";
      return new Response(new Uint8Array(100), { headers: { "content-type": type } });
    },
  });
  h = await listeningHarness({
    CRIER_INSTAGRAM_API_URL: served.url,
    CRIER_INSTAGRAM_AUTHORIZE_URL: `${served.url}/oauth/authorize`,
    CRIER_INSTAGRAM_TOKEN_URL: `${served.url}/oauth/access_token`,
    CRIER_INSTAGRAM_CLIENT_ID: "sandbox",
    CRIER_INSTAGRAM_CLIENT_SECRET: "sandbox",
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/instagram", { token });
  expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  expect(row.username).toBe("sandbox.insta");
  ctx = providerFor(h.ctx, row, { sandbox: false }).context;
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

const url = (f: string) => `http://127.0.0.1:${media.port}/${f}`;
const job = (content: string, items: { f: string; type: "image" | "video" }[]) =>
  ({ content, options: {}, idempotencyToken: crypto.randomUUID(), media: items.map((i) => ({ url: url(i.f), type: i.type })) });
async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await instagram.checkStatus!(ctx, out.handle);
  return out;
}

test("captions: 2,200 characters, 30 hashtags, 20 mentions", () => {
  expect(captionProblem("fine #a #b @c")).toBeNull();
  expect(captionProblem(Array.from({ length: 31 }, (_, i) => `#t${i}`).join(" "))).toContain("30 hashtags");
  expect(captionProblem(Array.from({ length: 21 }, (_, i) => `@u${i}`).join(" "))).toContain("20 @mentions");
  expect(captionProblem("x".repeat(2201))).toContain("2200");
});

test("a PNG is refused by Instagram for good", async () => {
  expect(await settle(await instagram.publish!(ctx, job("png", [{ f: "a.png", type: "image" }])))).toMatchObject({ kind: "permanent", code: "error" });
});

test("a video is a Reel with a reel permalink; a mixed carousel is one post", async () => {
  const reel = await settle(await instagram.publish!(ctx, job("reel", [{ f: "v.mp4", type: "video" }])));
  if (reel.kind !== "published") throw new Error(reel.kind);
  expect(reel.url).toStartWith("https://www.instagram.com/reel/");
  const album = await settle(await instagram.publish!(ctx, job("album", [{ f: "a.jpg", type: "image" }, { f: "v.mp4", type: "video" }])));
  if (album.kind !== "published") throw new Error(album.kind);
  expect(emulator.posts().at(-1)!.media.map((m) => m.type)).toEqual(["image", "video"]);
});

test("insights become views, likes, comments, shares and saves", async () => {
  const out = await settle(await instagram.publish!(ctx, job("measured", [{ f: "a.jpg", type: "image" }])));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { views: 100, likes: 10, comments: 3, shares: 2, saved: 5 });
  expect((await instagram.metrics!(ctx, [out.platformPostId]))[out.platformPostId]).toEqual({ views: 100, likes: 10, comments: 3, shares: 2, saves: 5 });
});
