/**
 * TikTok specifics beyond the conformance suite: scopes per user field, chunk plan, privacy options and
 * the audit, drafts, photo pulls, 19-digit ids, captions counted in UTF-16 units.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import { eq } from "drizzle-orm";
import tiktok, { chunkPlan } from "../../plugins/tiktok/index.ts";
import { createTikTokEmulator, type TikTokEmulator } from "../../plugins/tiktok/emulator.ts";
import { job, connectOne, rig as plainRig, type OAuthRig } from "./support.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";
import { followAuthorization } from "../support/connect-kit.ts";
import { accounts } from "../../src/db/schema.ts";
import { targetProblems } from "../../src/platform/host/content-check.ts";

const MB = 1024 * 1024;
let emulator: TikTokEmulator;
let rig: OAuthRig<TikTokEmulator>;
let ctx: PluginContext;

// Real files (sharp, ffmpeg): a video TikTok takes (360 px at least, 23 fps at least), and two it refuses.
const MP4 = makeVideo({ width: 360, height: 640, seconds: 1 });
const VIDEOS: Record<string, Uint8Array<ArrayBuffer>> = {
  "/small.mp4": makeVideo({ width: 320, height: 240, seconds: 1 }),
  "/slow.mp4": makeVideo({ width: 360, height: 640, seconds: 1, fps: 15 }),
};

beforeAll(async () => {
  const jpg = await makeImage({ width: 108, height: 192 });
  const png = await makeImage({ width: 108, height: 192, format: "png" });
  ({ rig, emulator, ctx } = await connectOne(createTikTokEmulator(), {
    authorizePath: "/v2/auth/authorize/",
    tokenPath: "/v2/oauth/token/",
    clientIdSetting: "CLIENT_KEY",
    media: (req) => {
      const p = new URL(req.url).pathname;
      if (p.endsWith(".jpg")) return new Response(jpg, { headers: { "content-type": "image/jpeg" } });
      if (p.endsWith(".png")) return new Response(png, { headers: { "content-type": "image/png" } });
      return new Response(VIDEOS[p] ?? MP4, { headers: { "content-type": "video/mp4" } });
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
    options: { privacy_level: "PUBLIC_TO_EVERYONE", ai_generated: true, video_cover_timestamp_ms: 1000 },
  });
  expect(out.url).toBe(`https://www.tiktok.com/@sandbox_tiktoker/video/${out.platformPostId}`);
});

test("a creator whose account offers only SELF_ONLY posts privately; asking for public is refused for good", async () => {
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

test("TikTok reads the uploaded video: under 360 px or 23 fps it fails with the check's fail_reason", async () => {
  expect(await settle(await tiktok.publish!(ctx, post("small", [{ f: "small.mp4", type: "video" }])))).toMatchObject({
    kind: "permanent",
    code: "picture_size_check_failed",
  });
  expect(await settle(await tiktok.publish!(ctx, post("slow", [{ f: "slow.mp4", type: "video" }])))).toMatchObject({
    kind: "permanent",
    code: "frame_rate_check_failed",
  });
  expect((await settle(await tiktok.publish!(ctx, post("fine", [{ f: "fine.mp4", type: "video" }])))).kind).toBe(
    "published",
  );
});

/** Connects one more account through the consent page; the user grants `scopes` only (null: all asked). */
async function connectGranting(scopes: string[] | null) {
  emulator.grantOnly(scopes);
  try {
    const { token, profileId } = await rig.h.profile();
    const res = await rig.h.request("POST", "/v1/accounts/connect/tiktok", { token });
    const page = await followAuthorization(res.body.data.authorization_url);
    const rows = await rig.h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
    return { page, row: rows[0] };
  } finally {
    emulator.grantOnly(null);
  }
}

test("TikTok answers a user field beyond the granted scopes with 401 scope_not_authorized, as documented", async () => {
  const token = ctx.credentials.access_token as string;
  const ask = (fields: string) =>
    fetch(`${rig.served.url}/v2/user/info/?fields=${fields}`, { headers: { authorization: `Bearer ${token}` } });
  const basic = await connectGranting(["user.info.basic", "video.publish", "video.upload", "video.list"]);
  const basicToken = rig.context(basic.row).credentials.access_token as string;
  const res = await fetch(`${rig.served.url}/v2/user/info/?fields=open_id,username`, {
    headers: { authorization: `Bearer ${basicToken}` },
  });
  expect(res.status).toBe(401);
  const body = (await res.json()) as { data: unknown; error: { code: string; message: string; log_id: string } };
  expect(body.data).toEqual({});
  expect(body.error.code).toBe("scope_not_authorized");
  expect(body.error.log_id).toMatch(/^[0-9A-F]+$/);
  // The account connected with every scope gets only the fields it asked for.
  const full = await ask("open_id,username,follower_count");
  expect(((await full.json()) as { data: { user: unknown } }).data.user).toEqual({
    open_id: "-000sandboxOpenId",
    username: "sandbox_tiktoker",
    follower_count: 1000,
  });
});

test("connect asks for user.info.profile and user.info.stats and stores the username and the granted scopes", async () => {
  // beforeAll connected the account: the username needs user.info.profile, which connect must ask for.
  expect(rig.rows[0].username).toBe("sandbox_tiktoker");
  expect(String(ctx.credentials.scope).split(",")).toEqual(
    expect.arrayContaining(["user.info.basic", "user.info.profile", "user.info.stats", "video.publish"]),
  );
  expect(await tiktok.accountStats!(ctx)).toEqual({ followers: 1000 });
});

test("a user who grants only user.info.basic still connects (display name), and has no follower number", async () => {
  const { page, row } = await connectGranting(["user.info.basic", "video.publish", "video.upload", "video.list"]);
  expect(page.html).toContain("Account connected");
  expect(row.username).toBe("Sandbox TikToker");
  const basicCtx = rig.context(row);
  expect(await tiktok.accountStats!(basicCtx)).toEqual({ followers: null });
});

test("a call refused for a scope the user did not grant fails for good: it is not an expired token", async () => {
  const { row } = await connectGranting(["user.info.basic", "user.info.profile", "video.upload", "video.list"]);
  const noPublish = rig.context(row);
  const out = await tiktok.publish!(noPublish, post("no publish scope", [{ f: "v.mp4", type: "video" }]));
  expect(out).toMatchObject({ kind: "permanent", code: "scope_not_authorized" });
});

test("an unaudited app: without a privacy asked for, the video goes out SELF_ONLY and the target says so", async () => {
  emulator.setAudited(false);
  try {
    const out = await settle(await tiktok.publish!(ctx, post("unaudited", [{ f: "v.mp4", type: "video" }])));
    expect(out).toMatchObject({ kind: "published", notice: { code: "tiktok_private_unaudited" } });
    expect(emulator.posts().at(-1)!.options).toMatchObject({ privacy_level: "SELF_ONLY" });
    // Public asked for in so many words is refused, not changed behind the client's back.
    expect(
      await tiktok.publish!(
        ctx,
        post("public please", [{ f: "v.mp4", type: "video" }], { privacy_level: "PUBLIC_TO_EVERYONE" }),
      ),
    ).toMatchObject({ kind: "permanent", code: "unaudited_client_can_only_post_to_private_accounts" });
  } finally {
    emulator.setAudited(true);
  }
});

test("captions count in UTF-16 units, as TikTok counts them: 1,101 emoji are 2,202 units, over 2,200", () => {
  const check = (content: string) =>
    targetProblems({
      label: "targets[0]",
      accountId: "a",
      plugin: tiktok,
      content,
      media: [{ url: "https://example.com/v.mp4", type: "video" }],
      options: {},
    }).map((p) => p.code);
  expect(check("😀".repeat(1100))).toEqual([]);
  expect(check("😀".repeat(1101))).toContain("content_too_long");
});

test("TikTok refuses a video caption over 2,200 UTF-16 units; a photo title is cut on a character boundary", async () => {
  // Past the content check (as a stale declaration would let through): TikTok itself says no.
  expect(await tiktok.publish!(ctx, post("😀".repeat(1101), [{ f: "v.mp4", type: "video" }]))).toMatchObject({
    kind: "permanent",
    code: "invalid_params",
  });
  const ok = await settle(
    await tiktok.publish!(ctx, post(`${"😀".repeat(60)}\nmore`, [{ f: "a.jpg", type: "image" }])),
  );
  expect(ok.kind).toBe("published");
  const title = emulator.posts().at(-1)!.text.split("\n")[0];
  // 90 units: 45 emoji, none cut in half.
  expect(title).toBe("😀".repeat(45));
});

test("an error code in an envelope answered with HTTP 200 is a failure, never taken for the data", async () => {
  // Third-party reports say some refusals (spam_risk_*) come back with HTTP 200: only error.code "ok" is success.
  const wrapped = Object.assign(Object.create(emulator) as TikTokEmulator, {
    handle: (req: Request, path: string) =>
      path === "/v2/post/publish/video/init/"
        ? Response.json({
            data: {},
            error: { code: "spam_risk_too_many_posts", message: "Daily cap reached.", log_id: "LOG1" },
          })
        : emulator.handle(req, path),
  });
  const r = plainRig(tiktok, wrapped);
  try {
    const c = r.context({ credentials: ctx.credentials, username: "sandbox_tiktoker" });
    const out = await tiktok.publish!(
      Object.assign(c, { media: ctx.media }),
      post("capped", [{ f: "v.mp4", type: "video" }]),
    );
    expect(out).toMatchObject({ kind: "retryable" });
  } finally {
    await r.stop();
  }
});

test("video_cover_timestamp_ms picks the cover of a direct video only, and wins over media[].thumbnail_url", async () => {
  const withBoth = post("covered", [{ f: "v.mp4", type: "video" }], { video_cover_timestamp_ms: 2500 });
  withBoth.media[0].thumbnail_url = `${rig.mediaUrl}/cover.jpg`;
  const out = await settle(await tiktok.publish!(ctx, withBoth));
  expect(out.kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toMatchObject({ video_cover_timestamp_ms: 2500 });
  // A draft (inbox upload) takes no post_info: no cover frame is sent with it.
  const draft = await settle(
    await tiktok.publish!(
      ctx,
      post("draft", [{ f: "v.mp4", type: "video" }], { video_cover_timestamp_ms: 2500, publish_mode: "draft" }),
    ),
  );
  expect(draft.kind).not.toBe("permanent");
  expect(JSON.stringify(emulator.posts().at(-1)!.options ?? {})).not.toContain("video_cover_timestamp_ms");
});
