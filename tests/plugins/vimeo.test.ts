/** Vimeo specifics beyond the conformance suite: title and privacy, quota, a video Vimeo cannot transcode. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import vimeo, { titleOf } from "../../plugins/vimeo/index.ts";
import { createVimeoEmulator, type VimeoEmulator } from "../../plugins/vimeo/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { fakeMp4 } from "../support/media-fixtures.ts";

let emulator: VimeoEmulator;
let rig: OAuthRig<VimeoEmulator>;
let ctx: PluginContext;

const MP4 = fakeMp4(2048);

beforeAll(async () => {
  ({ rig, emulator, ctx } = await connectOne(createVimeoEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/access_token",
    media: (req) =>
      new Response(new URL(req.url).pathname === "/good.mp4" ? MP4 : new Uint8Array(2048), {
        headers: { "content-type": "video/mp4" },
      }),
    mediaMaxBytes: 1024 * 1024,
  }));
});
afterAll(() => rig.stop());

const upload = (content: string, file = "good.mp4", options: Record<string, unknown> = {}) =>
  job(content, { options, media: [{ url: `${rig.mediaUrl}/${file}`, type: "video" }] });

async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await vimeo.checkStatus!(ctx, out.handle);
  return out;
}

test("the title is platform_options.title, else the first line cut to 128", () => {
  expect(titleOf({ content: "\nFirst line\nmore", options: {} })).toBe("First line");
  expect(titleOf({ content: "x".repeat(200), options: {} })).toHaveLength(128);
  expect(titleOf({ content: "body", options: { title: "Given" } })).toBe("Given");
});

test("an unlisted video publishes with its private link", async () => {
  const out = await settle(
    await vimeo.publish!(ctx, upload("My film\nabout things", "good.mp4", { privacy_view: "unlisted" })),
  );
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.url).toMatch(new RegExp(`^https://vimeo.com/${out.platformPostId}/[0-9a-f]{10}$`));
  expect(emulator.posts().at(-1)).toMatchObject({
    text: "My film\nMy film\nabout things",
    options: { privacy_view: "unlisted" },
  });
});

test("a video Vimeo cannot transcode fails for good", async () => {
  const out = await settle(await vimeo.publish!(ctx, upload("broken", "bad.mp4")));
  expect(out).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
});

test("a failed upload deletes its empty video (the delete scope was asked for), so retries leave none behind", async () => {
  const before = emulator.posts().length;
  emulator.failNext({ kind: "server_error", on: "/upload/" });
  const out = await vimeo.publish!(ctx, upload("Upload breaks"));
  expect(out.kind).toBe("retryable");
  expect(emulator.posts().length).toBe(before);
});

test("Vimeo refuses DELETE to a token without the delete scope", async () => {
  const created = await vimeo.publish!(ctx, upload("Keep me"));
  if (created.kind !== "submitted" && created.kind !== "published") throw new Error(created.kind);
  const id = created.kind === "published" ? created.platformPostId : created.handle.split("/").pop();
  const consent = new URL(`${rig.served.url}/oauth/authorize`);
  consent.search = new URLSearchParams({
    client_id: "sandbox",
    redirect_uri: "http://127.0.0.1/cb",
    response_type: "code",
    scope: "public private upload",
  }).toString();
  const code = new URL((await fetch(consent, { redirect: "manual" })).headers.get("location")!).searchParams.get(
    "code",
  )!;
  const tokenRes = await fetch(`${rig.served.url}/oauth/access_token`, {
    method: "POST",
    headers: { authorization: `Basic ${btoa("sandbox:sandbox")}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "http://127.0.0.1/cb" }),
  });
  const { access_token } = (await tokenRes.json()) as { access_token: string };
  const del = await fetch(`${rig.served.url}/videos/${id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${access_token}` },
  });
  expect(del.status).toBe(403);
  expect(((await del.json()) as { error: string }).error).toBe('Your access token does not have the "delete" scope');
});

test("the emulator holds POST /me/videos and GET /me/videos to Vimeo's published OpenAPI", async () => {
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${rig.served.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${String(ctx.credentials.access_token)}`, "content-type": "application/json" },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  // upload.size is a string of bytes in Vimeo's schema; a number is an invalid body parameter.
  const numeric = await call("POST", "/me/videos", { upload: { approach: "tus", size: 2048 } });
  expect(numeric.status).toBe(400);
  expect(await numeric.json()).toMatchObject({ error_code: 2204 });
  const view = await call("POST", "/me/videos", {
    upload: { approach: "tus", size: "2048" },
    privacy: { view: "public" },
  });
  expect(view.status).toBe(400);
  expect((await call("GET", "/me/videos?sort=newest")).status).toBe(400);
  expect((await call("GET", "/me/videos?sort=date&direction=desc&per_page=50")).status).toBe(200);
});

test("a used-up upload quota is permanent, not retried", async () => {
  emulator.exhaustQuota();
  expect(await vimeo.publish!(ctx, upload("over quota"))).toMatchObject({ kind: "permanent", code: "quota_exceeded" });
});
