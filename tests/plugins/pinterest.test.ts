/** Pinterest specifics beyond the conformance suite: boards, titles, carousels, a GIF by URL, a failed video, refresh, metrics. */
import { makeVideo } from "../support/media-files.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { MediaItem, Outcome, PluginContext } from "../../src/platform/sdk.ts";
import pinterest, { pinTitle } from "../../plugins/pinterest/index.ts";
import { createPinterestEmulator, type PinterestEmulator } from "../../plugins/pinterest/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";

let emulator: PinterestEmulator;
let rig: OAuthRig<PinterestEmulator>;
let ctx: PluginContext;

beforeAll(async () => {
  // Real videos (ffmpeg): Pinterest's specs take 4 s to 15 min.
  const videos: Record<string, Uint8Array<ArrayBuffer>> = {
    "/two.mp4": makeVideo({ width: 360, height: 640, seconds: 2 }),
    "/five.mp4": makeVideo({ width: 360, height: 640, seconds: 5 }),
  };
  ({ rig, emulator, ctx } = await connectOne(createPinterestEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/token",
    media: (req) => {
      const p = new URL(req.url).pathname;
      if (p.endsWith(".gif")) return new Response(Buffer.from("GIF89a"), { headers: { "content-type": "image/gif" } });
      if (p.endsWith(".png"))
        return new Response(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]), {
          headers: { "content-type": "image/png" },
        });
      return new Response(videos[p] ?? new Uint8Array(500), { headers: { "content-type": "video/mp4" } });
    },
    mediaMaxBytes: 1024 * 1024,
  }));
});
afterAll(() => rig.stop());

const url = (f: string) => `${rig.mediaUrl}/${f}`;
const pin = (content: string, media: MediaItem[], options: Record<string, unknown> = {}) =>
  job(content, { media, options });
async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await pinterest.checkStatus!(ctx, out.handle);
  return out;
}

test("the title is options.title or the first line; the account's first board is used", async () => {
  expect(pinTitle({ content: "Line one\nrest", options: {} })).toBe("Line one");
  const out = await pinterest.publish!(ctx, pin("Line one\nrest", [{ url: url("a.gif"), type: "image" }]));
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.url).toBe(`https://www.pinterest.com/pin/${out.platformPostId}/`);
  expect(emulator.posts().at(-1)).toMatchObject({
    text: "Line one\nLine one\nrest",
    options: { board_id: "1100000000000000100" },
  });
});

test("an unknown board is refused for good", async () => {
  expect(
    await pinterest.publish!(ctx, pin("x", [{ url: url("a.gif"), type: "image" }], { board_id: "42" })),
  ).toMatchObject({ kind: "permanent" });
});

test("several images are one carousel pin", async () => {
  const out = await pinterest.publish!(
    ctx,
    pin("carousel", [
      { url: url("a.gif"), type: "image" },
      { url: url("b.gif"), type: "image" },
    ]),
  );
  expect(out.kind).toBe("published");
  expect(emulator.posts().at(-1)!.media).toHaveLength(2);
});

test("a video Pinterest cannot process fails for good", async () => {
  expect(
    await settle(await pinterest.publish!(ctx, pin("bad video", [{ url: url("v.mp4"), type: "video" }]))),
  ).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
});

test("Pinterest reads the uploaded video: 2 s fails processing, 5 s is pinned", async () => {
  const video = (f: string) => pin(f, [{ url: url(f), type: "video" }]);
  expect(await settle(await pinterest.publish!(ctx, video("two.mp4")))).toMatchObject({
    kind: "permanent",
    code: "video_processing_failed",
  });
  expect((await settle(await pinterest.publish!(ctx, video("five.mp4")))).kind).toBe("published");
});

test("refresh rotates the tokens; metrics read lifetime numbers", async () => {
  const old = ctx.credentials.refresh_token;
  await pinterest.refresh!(ctx);
  expect(ctx.credentials.refresh_token).not.toBe(old);
  const out = await pinterest.publish!(ctx, pin("measured", [{ url: url("c.gif"), type: "image" }]));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { impression: 50, save: 4, reaction: 3, comment: 1 });
  expect((await pinterest.metrics!(ctx, [out.platformPostId]))[out.platformPostId]).toEqual({
    views: 50,
    likes: 3,
    comments: 1,
    shares: null,
    saves: 4,
  });
});

test("a carousel of PNG and JPEG goes as bytes (multiple_image_base64), so its files need no public URL", async () => {
  const out = await pinterest.publish!(
    ctx,
    pin("byte carousel", [
      { url: url("a.png"), type: "image" },
      { url: url("b.png"), type: "image" },
    ]),
  );
  expect(out.kind).toBe("published");
  expect(emulator.posts().at(-1)).toMatchObject({
    media: [{ type: "image" }, { type: "image" }],
    options: { source_type: "multiple_image_base64" },
  });
});

/** A token whose consent asked for these scopes only, as a user would grant them. */
async function tokenWith(scope: string): Promise<string> {
  const consent = new URL(`${rig.served.url}/oauth/authorize`);
  consent.search = new URLSearchParams({ client_id: "sandbox", redirect_uri: "http://127.0.0.1/cb", scope }).toString();
  const code = new URL((await fetch(consent, { redirect: "manual" })).headers.get("location")!).searchParams.get(
    "code",
  )!;
  const res = await fetch(`${rig.served.url}/oauth/token`, {
    method: "POST",
    headers: { authorization: `Basic ${btoa("sandbox:sandbox")}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "http://127.0.0.1/cb" }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

const createPin = (token: string, body: unknown) =>
  fetch(`${rig.served.url}/pins`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

test("the emulator holds POST /pins to Pinterest's published PinCreate schema and to the scopes it lists", async () => {
  const full = String(ctx.credentials.access_token);
  const source = { source_type: "image_url", url: "https://example.com/a.gif" };
  const letters = await createPin(full, { board_id: "crier", media_source: source });
  expect(letters.status).toBe(400);
  expect(await letters.json()).toMatchObject({ code: 1 });
  const longAlt = await createPin(full, {
    board_id: "1100000000000000100",
    alt_text: "x".repeat(501),
    media_source: source,
  });
  expect(longAlt.status).toBe(400);
  const readOnly = await tokenWith("boards:read,pins:read,user_accounts:read");
  const refused = await createPin(readOnly, { board_id: "1100000000000000100", media_source: source });
  expect(refused.status).toBe(403);
  expect(await refused.json()).toEqual({ code: 29, message: "You are not permitted to access that resource." });
  expect((await createPin(full, { board_id: "1100000000000000100", media_source: source })).status).toBe(201);
});
