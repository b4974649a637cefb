/**
 * Platforms that fan one account target into several publications (Snapchat placements): one target per
 * variant with target_variant, each published once through the engine, from media uploaded to Crier.
 */
import { makeVideo } from "../support/media-files.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createSnapchatEmulator } from "../../plugins/snapchat/emulator.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { createKey } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { oauthRig, type OAuthRig } from "../plugins/support.ts";

const emulator = createSnapchatEmulator();
let rig: OAuthRig<typeof emulator>;
let token: string;
let accountId: string;

beforeAll(async () => {
  rig = await oauthRig(emulator, {
    authorizePath: "/login/oauth2/authorize",
    tokenPath: "/login/oauth2/access_token",
    media: () => new Response("not used", { status: 404 }),
  });
  const [row] = rig.rows;
  accountId = row.id;
  ({ token } = await createKey(rig.h.db, { name: "variants", profileId: row.profileId, scopes: [...SCOPES] }));
});
afterAll(() => rig.stop());

async function uploadVideo(): Promise<string> {
  const ticket = await rig.h.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "clip.mp4", content_type: "video/mp4" },
  });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "video/mp4" },
    // Snapchat takes 5 to 60 s at 540×960 or more, which Crier checks from the file.
    body: makeVideo({ width: 540, height: 960, seconds: 6, fps: 30 }),
  });
  expect(put.status).toBeLessThan(300);
  const media = await rig.h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token });
  expect(media.status).toBe(200);
  return media.body.data.public_url;
}

test("placements make one target per variant, and each variant is published once", async () => {
  const url = await uploadVideo();
  const created = await rig.h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "#crier clip",
      media: [{ url, type: "video" }],
      targets: [
        { account_id: accountId, platform_options: { placements: ["spotlight", "public_story"], locale: "fr_FR" } },
      ],
    },
  });
  expect(created.status).toBe(201);
  const targets = created.body.data.targets;
  expect(targets.map((t: { target_variant: string }) => t.target_variant).sort()).toEqual([
    "public_story",
    "spotlight",
  ]);
  expect(new Set(targets.map((t: { account_id: string }) => t.account_id))).toEqual(new Set([accountId]));

  const before = emulator.posts().length;
  const engine = createEngine(rig.h.ctx, { random: () => 0.5 });
  await engine.runUntilIdle();
  await engine.stop();

  const post = (await rig.h.request("GET", `/v1/posts/${created.body.data.id}`, { token })).body.data;
  expect(post.status).toBe("published");
  expect(post.targets.map((t: { status: string }) => t.status)).toEqual(["published", "published"]);
  const placements = emulator
    .posts()
    .slice(before)
    .map((p) => p.options?.placement)
    .sort();
  expect(placements).toEqual(["public_story", "spotlight"]);
});

test("without placements a Snapchat target is one Spotlight", async () => {
  const url = await uploadVideo();
  const created = await rig.h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "spot",
      media: [{ url, type: "video" }],
      publish_at: new Date(Date.now() + 86400_000).toISOString(),
      targets: [{ account_id: accountId }],
    },
  });
  expect(created.status).toBe(201);
  expect(created.body.data.targets.map((t: { target_variant: string }) => t.target_variant)).toEqual(["spotlight"]);
});

test("an unknown placement is refused at creation naming the target", async () => {
  const res = await rig.h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "x",
      media: [{ url: "https://cdn.example.com/v.mp4", type: "video" }],
      targets: [{ account_id: accountId, platform_options: { placements: ["saved_story"] } }],
    },
  });
  expect(res.status).toBe(400);
  expect(res.body.error.message).toContain(accountId);
});
