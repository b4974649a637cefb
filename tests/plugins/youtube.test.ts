/**
 * YouTube specifics beyond the conformance suite: title and description rules, Shorts URLs, a video YouTube
 * rejects, refresh, a project YouTube has not audited, and the video resource held to YouTube's contract.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { MediaItem, Outcome, PluginContext } from "../../src/platform/sdk.ts";
import youtube, { descriptionOf, titleOf } from "../../plugins/youtube/index.ts";
import { eq } from "drizzle-orm";
import { createEngine } from "../../src/engine/scheduler.ts";
import { accounts } from "../../src/db/schema.ts";
import { followAuthorization } from "../support/connect-kit.ts";
import { makeMp4 } from "../support/media-fixtures.ts";
import { createYouTubeEmulator, type YouTubeEmulator } from "../../plugins/youtube/emulator.ts";
import { job, connectOne, rig as plainRig, type OAuthRig } from "./support.ts";
import { fakeMp4, makeGif } from "../support/media-fixtures.ts";
import { makeImage } from "../support/media-files.ts";
import { optionsForPlugin } from "../../src/platform/host/options.ts";

let emulator: YouTubeEmulator;
let rig: OAuthRig<YouTubeEmulator>;
let ctx: PluginContext;

const MP4 = fakeMp4(4096);
let COVER: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  COVER = await makeImage({ width: 1280, height: 720, format: "jpeg" });
  ({ rig, emulator, ctx } = await connectOne(createYouTubeEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/token",
    media: (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/cover.jpg") return new Response(COVER, { headers: { "content-type": "image/jpeg" } });
      // A GIF is no cover YouTube takes (JPEG or PNG only).
      if (path === "/cover.gif") return new Response(GIF, { headers: { "content-type": "image/gif" } });
      return new Response(path === "/good.mp4" ? MP4 : new Uint8Array(4096), {
        headers: { "content-type": "video/mp4" },
      });
    },
    mediaMaxBytes: 1024 * 1024,
    username: "@sandboxtube",
  }));
});
afterAll(() => rig.stop());

const upload = (content: string, video: Partial<MediaItem> = {}, options: Record<string, unknown> = {}) =>
  job(content, { options, media: [{ url: `${rig.mediaUrl}/good.mp4`, type: "video", ...video }] });

const GIF = makeGif(8, 8);

async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await youtube.checkStatus!(ctx, out.handle);
  return out;
}

test("titles come from options or the first line, < and > as look-alikes, at most 100 UTF-16 units", () => {
  expect(titleOf({ content: "a <b> c\nrest", options: {} })).toBe("a \u2039b\u203a c");
  expect(titleOf({ content: "x".repeat(150), options: {} })).toHaveLength(100);
  expect(titleOf({ content: "body", options: { title: "Given" } })).toBe("Given");
  // 60 emoji are 120 UTF-16 units: 50 fit, none cut in half.
  expect(titleOf({ content: "\u{1F600}".repeat(60), options: {} })).toBe("\u{1F600}".repeat(50));
});

test("a description with -> and <3 is published: YouTube refuses < and > there, so they become ‹ and ›", async () => {
  const out = await settle(
    await youtube.publish!(ctx, upload("Title line\nA -> B, and <3 for you", { duration: 600 })),
  );
  expect(out.kind).toBe("published");
  expect(emulator.posts().at(-1)!.text).toContain("A -\u203a B, and \u20393 for you");
  // At YouTube's 5,000 bytes the 3-byte look-alikes would not fit: the < and > are dropped instead.
  const full = `${"a".repeat(4990)}<<<<>>`;
  expect(descriptionOf(full)).toBe("a".repeat(4990));
});

test("a project YouTube has not audited: the public upload comes back private and the result says so", async () => {
  emulator.setAudited(false);
  try {
    const out = await settle(await youtube.publish!(ctx, upload("Unaudited upload", { duration: 600 })));
    expect(out).toMatchObject({ kind: "published", notice: { code: "youtube_private_unaudited" } });
    expect(emulator.posts().at(-1)!.options).toMatchObject({ privacy_status: "private" });
    // Private was asked: nothing to say.
    const asked = await settle(
      await youtube.publish!(ctx, upload("Meant private", { duration: 600 }, { privacy_status: "private" })),
    );
    expect(asked.kind).toBe("published");
    expect(asked).not.toHaveProperty("notice");
  } finally {
    emulator.setAudited(true);
  }
});

test("through the API: the target of a video YouTube kept private reads published with error_code youtube_private_unaudited", async () => {
  const h = rig.h;
  const { token, profileId } = await h.profile();
  const connect = await h.request("POST", "/v1/accounts/connect/youtube", { token });
  await followAuthorization(connect.body.data.authorization_url);
  const [account] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  const ticket = await h.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "clip.mp4", content_type: "video/mp4" },
  });
  await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "video/mp4" },
    body: makeMp4(50_000),
  });
  const media = await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token });
  const created = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "Kept private",
      media: [{ url: media.body.data.public_url, type: "video" }],
      targets: [{ account_id: account.id }],
    },
  });
  expect(created.status).toBe(201);
  emulator.setAudited(false);
  const engine = createEngine(h.ctx, { submitPollMs: 1000 });
  try {
    for (let i = 0; i < 6; i++) {
      await engine.runUntilIdle();
      h.clock.advance(1000);
    }
  } finally {
    emulator.setAudited(true);
    await engine.stop();
  }
  const post = (await h.request("GET", `/v1/posts/${created.body.data.id}`, { token })).body.data;
  expect(post.status).toBe("published");
  expect(post.targets[0]).toMatchObject({ status: "published", error_code: "youtube_private_unaudited" });
  expect(post.targets[0].error).toContain("private");
});

test("YouTube refuses a video resource field its contract does not declare, and a part it does not know", async () => {
  const auth = { authorization: `Bearer ${ctx.credentials.access_token as string}` };
  const insert = (part: string, body: unknown) =>
    fetch(`${rig.served.url}/upload/youtube/v3/videos?uploadType=resumable&part=${part}`, {
      method: "POST",
      headers: {
        ...auth,
        "content-type": "application/json",
        "x-upload-content-length": "10",
        "x-upload-content-type": "video/mp4",
      },
      body: JSON.stringify(body),
    });
  const unknownField = await insert("snippet", { snippet: { title: "t", categoryId: "22", playlistId: "PL1" } });
  expect(unknownField.status).toBe(400);
  expect(JSON.stringify(await unknownField.json())).toContain("Unknown name \\\"playlistId\\\" at 'resource.snippet'");
  const unknownPart = await insert("snippet,statuss", { snippet: { title: "t" } });
  expect(unknownPart.status).toBe(400);
  // The parts the adapter sends are what it names.
  expect(
    (await insert("snippet,status", { snippet: { title: "t" }, status: { privacyStatus: "unlisted" } })).status,
  ).toBe(200);
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

test("a description option over 5,000 bytes is refused before the upload spends quota", async () => {
  const before = emulator.posts().length;
  const out = await youtube.publish!(ctx, upload("Title", { duration: 600 }, { description: "\u00e9".repeat(3000) }));
  expect(out).toMatchObject({ kind: "permanent", code: "description_too_long" });
  expect(emulator.posts()).toHaveLength(before);
});

test("an upload YouTube took without naming the video is an unknown outcome, never a video called undefined", async () => {
  const wrapped = Object.assign(Object.create(emulator) as YouTubeEmulator, {
    handle: async (req: Request, path: string) => {
      const res = await emulator.handle(req, path);
      return path.startsWith("/upload/session/") && res.ok ? Response.json({ kind: "youtube#video" }) : res;
    },
  });
  const r = plainRig(youtube, wrapped);
  try {
    const c = Object.assign(r.context({ credentials: ctx.credentials }), { media: ctx.media });
    expect(await youtube.publish!(c, upload("No id", { duration: 600 }))).toMatchObject({ kind: "unknown" });
  } finally {
    await r.stop();
  }
});

/** A user connects another channel through Google's consent screen, granting only `scopes` (null: all). */
async function connectGranting(scopes: string[] | null) {
  emulator.grantOnly(scopes);
  try {
    const { token, profileId } = await rig.h.profile();
    const res = await rig.h.request("POST", "/v1/accounts/connect/youtube", { token });
    const consent = new URL(res.body.data.authorization_url);
    const page = await followAuthorization(res.body.data.authorization_url);
    const rows = await rig.h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
    return { consent, page, rows };
  } finally {
    emulator.grantOnly(null);
  }
}

const SCOPE = "https://www.googleapis.com/auth/";

test("connect asks Google for upload, read-only and comment access, and nothing it never uses", async () => {
  const { consent, rows } = await connectGranting(null);
  // force-ssl is the only scope commentThreads.insert takes (first comments).
  expect(consent.searchParams.get("scope")!.split(" ").sort()).toEqual([
    `${SCOPE}youtube.force-ssl`,
    `${SCOPE}youtube.readonly`,
    `${SCOPE}youtube.upload`,
  ]);
  expect(rows).toHaveLength(1);
});

test("a user who unticks upload on Google's consent screen is told at connect, not at every publish", async () => {
  const { page, rows } = await connectGranting([`${SCOPE}youtube.readonly`]);
  expect(page.html).toContain("leave every permission ticked");
  expect(rows).toHaveLength(0);
});

test("YouTube refuses a call whose token lacks its scope: 403 insufficientPermissions", async () => {
  // A token for upload only, straight from the emulated Google OAuth.
  const redirect = "http://127.0.0.1/cb";
  const consent = await fetch(
    `${rig.served.url}/oauth/authorize?client_id=sandbox&redirect_uri=${encodeURIComponent(redirect)}&state=s&scope=${encodeURIComponent(`${SCOPE}youtube.upload`)}`,
    { redirect: "manual" },
  );
  const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
  const granted = (await (
    await fetch(`${rig.served.url}/token`, {
      method: "POST",
      body: new URLSearchParams({
        client_id: "sandbox",
        client_secret: "sandbox",
        code,
        grant_type: "authorization_code",
        redirect_uri: redirect,
      }),
    })
  ).json()) as { access_token: string; scope: string };
  expect(granted.scope).toBe(`${SCOPE}youtube.upload`);
  const read = await fetch(`${rig.served.url}/youtube/v3/channels?part=id&mine=true`, {
    headers: { authorization: `Bearer ${granted.access_token}` },
  });
  expect(read.status).toBe(403);
  const refusal = (await read.json()) as { error: { status: string; errors: { reason: string }[] } };
  expect(refusal.error).toMatchObject({ status: "PERMISSION_DENIED", errors: [{ reason: "insufficientPermissions" }] });
});

test("a Google account without a YouTube channel is told so on the connect page", async () => {
  emulator.setChannel(false);
  try {
    const { page, rows } = await connectGranting(null);
    expect(page.html).toContain("has no YouTube channel");
    expect(rows).toHaveLength(0);
  } finally {
    emulator.setChannel(true);
  }
});

test("media[].thumbnail_url becomes the video's custom thumbnail through thumbnails.set, with the cover's bytes", async () => {
  const out = await settle(
    await youtube.publish!(ctx, upload("With a cover", { duration: 600, thumbnail_url: `${rig.mediaUrl}/cover.jpg` })),
  );
  expect(out.kind).toBe("published");
  expect(out).not.toHaveProperty("notice");
  expect(emulator.posts().at(-1)!.options).toMatchObject({
    thumbnail: { content_type: "image/jpeg", size: COVER.byteLength },
  });
});

test("a channel that may not use custom thumbnails (403 forbidden): the video is still published, with a notice", async () => {
  emulator.setCustomThumbnails(false);
  try {
    const out = await settle(
      await youtube.publish!(
        ctx,
        upload("Cover refused", { duration: 600, thumbnail_url: `${rig.mediaUrl}/cover.jpg` }),
      ),
    );
    expect(out).toMatchObject({ kind: "published", notice: { code: "cover_not_allowed" } });
    expect((out as { notice: { message: string } }).notice.message).toContain("custom thumbnails");
    expect(emulator.posts().at(-1)!.options).not.toHaveProperty("thumbnail");
  } finally {
    emulator.setCustomThumbnails(true);
  }
});

test("a cover YouTube refuses as an image (a GIF) leaves the video published with a notice", async () => {
  const out = await settle(
    await youtube.publish!(ctx, upload("GIF cover", { duration: 600, thumbnail_url: `${rig.mediaUrl}/cover.gif` })),
  );
  expect(out).toMatchObject({ kind: "published", notice: { code: "cover_not_set" } });
});
