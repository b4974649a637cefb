/** LinkedIn specifics beyond the conformance suite: little-text escaping, multi-image posts, video size bounds. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PluginContext } from "../../src/platform/sdk.ts";
import linkedin, { DEFAULT_VERSION, escapeLittleText, versionWarnings } from "../../plugins/linkedin/index.ts";
import { createLinkedInEmulator, type LinkedInEmulator } from "../../plugins/linkedin/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { collectAnalytics } from "../../src/engine/analytics.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";

let emulator: LinkedInEmulator;
let rig: OAuthRig<LinkedInEmulator>;
let ctx: PluginContext;

beforeAll(async () => {
  // Real files (sharp, ffmpeg): LinkedIn reads what it receives. Videos over its 75 KB floor: one of
  // 4 s, one of 2 s (the Videos API takes 3 s at least).
  const files: Record<string, Uint8Array<ArrayBuffer>> = {
    "/a.png": await makeImage({ width: 120, height: 80, format: "png" }),
    "/four.mp4": makeVideo({ width: 640, height: 480, seconds: 4 }),
    "/two.mp4": makeVideo({ width: 960, height: 720, seconds: 2 }),
  };
  ({ rig, emulator, ctx } = await connectOne(createLinkedInEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    media: (req) =>
      new URL(req.url).pathname.endsWith(".png")
        ? new Response(files["/a.png"], { headers: { "content-type": "image/png" } })
        : new Response(files[new URL(req.url).pathname] ?? new Uint8Array(1000), {
            headers: { "content-type": "video/mp4" },
          }),
    mediaMaxBytes: 1024 * 1024,
    // This app was granted r_member_social (LinkedIn grants it to approved developers only).
    settings: { EXTRA_SCOPES: "r_member_social" },
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

test("LinkedIn reads the video: one of 2 s fails processing with no post, one of 4 s is published", async () => {
  const before = emulator.posts().length;
  const video = (f: string) => ({ media: [{ url: `${rig.mediaUrl}/${f}`, type: "video" as const }] });
  let out = await linkedin.publish!(ctx, job("two seconds", video("two.mp4")));
  for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await linkedin.checkStatus!(ctx, out.handle);
  expect(out.kind).toBe("permanent");
  expect(emulator.posts().length).toBe(before);
  out = await linkedin.publish!(ctx, job("four seconds", video("four.mp4")));
  for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await linkedin.checkStatus!(ctx, out.handle);
  expect(out.kind).toBe("published");
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

test("metrics read likes and comments where the app was granted r_member_social", async () => {
  const out = await linkedin.publish!(ctx, job("measured"));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { likes: 7, comments: 2 });
  expect((await linkedin.metrics!(ctx, [out.platformPostId]))[out.platformPostId]).toMatchObject({
    likes: 7,
    comments: 2,
    views: null,
  });
});

test("the default LinkedIn-Version is one LinkedIn serves today; a sunset one is refused for good", async () => {
  expect(versionWarnings({}, new Date())).toEqual([]);
  expect((await linkedin.publish!(ctx, job("current version"))).kind).toBe("published");
  const before = emulator.posts().length;
  const old = { ...ctx, settings: { ...ctx.settings, VERSION: "202506" } };
  expect(await linkedin.publish!(old, job("sunset version"))).toMatchObject({
    kind: "permanent",
    code: "version_inactive",
  });
  expect(emulator.posts().length).toBe(before);
  const res = await fetch(`${rig.served.url}/rest/posts`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${String(ctx.credentials.access_token)}`,
      "linkedin-version": "202506",
      "x-restli-protocol-version": "2.0.0",
    },
    body: "{}",
  });
  expect(res.status).toBe(426);
  expect(await res.json()).toMatchObject({
    status: 426,
    code: "NONEXISTENT_VERSION",
    message: "Requested version 20250601 is not active",
  });
});

test("the version warning comes two months before the sunset, and says so once it is past", () => {
  expect(DEFAULT_VERSION).toMatch(/^\d{6}$/);
  expect(versionWarnings({ VERSION: "202607" }, new Date("2027-05-10T00:00:00Z"))).toEqual([]);
  expect(versionWarnings({ VERSION: "202607" }, new Date("2027-05-20T00:00:00Z"))[0]).toContain(
    "LinkedIn-Version 202607 is sunset about 2027-07-15",
  );
  expect(versionWarnings({ VERSION: "202511" }, new Date("2026-11-26T00:00:00Z"))[0]).toContain("past its sunset");
  expect(versionWarnings({ VERSION: "June" }, new Date())[0]).toContain("is not a LinkedIn version");
});

test("without r_member_social (LinkedIn grants it to approved apps only) the numbers are limited, not a failure", async () => {
  const plain = await connectOne(createLinkedInEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    media: () => new Response(null, { status: 404 }),
  });
  try {
    const { h, token, rows } = plain.rig;
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "numbers please", targets: [{ account_id: rows[0].id }] },
    });
    expect(created.status).toBe(201);
    const engine = createEngine(h.ctx, { random: () => 0.5 });
    await engine.runUntilIdle();
    await engine.stop();
    const published = await h.request("GET", `/v1/posts/${created.body.data.id}`, { token });
    expect(published.body.data.status).toBe("published");
    await collectAnalytics(h.ctx, { claimedBy: "test" });
    const res = await h.request("GET", `/v1/posts/${created.body.data.id}/analytics`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data.targets[0]).toMatchObject({ metrics_status: "limited", likes: null, comments: null });
  } finally {
    await plain.rig.stop();
  }
});

test("posting needs w_member_social: a token without it is refused with 403", async () => {
  const consent = new URL(`${rig.served.url}/oauth/authorize`);
  consent.search = new URLSearchParams({
    client_id: "sandbox",
    redirect_uri: "http://127.0.0.1/cb",
    scope: "openid profile",
  }).toString();
  const code = new URL((await fetch(consent, { redirect: "manual" })).headers.get("location")!).searchParams.get(
    "code",
  )!;
  const granted = await fetch(`${rig.served.url}/oauth/v2/accessToken`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: "http://127.0.0.1/cb",
      client_id: "sandbox",
      client_secret: "sandbox",
    }),
  });
  const token = ((await granted.json()) as { access_token: string }).access_token;
  const readOnly = { ...ctx, credentials: { ...ctx.credentials, access_token: token } };
  expect(await linkedin.publish!(readOnly, job("not allowed"))).toMatchObject({
    kind: "permanent",
    code: "access_denied",
  });
});
