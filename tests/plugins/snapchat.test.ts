/** Snapchat specifics beyond the conformance suite: placements as variants, Spotlight rules, encrypted uploads. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createMediaAccess } from "../../src/platform/media.ts";
import { providerFor } from "../../src/platform/provider.ts";
import type { PluginContext } from "../../src/platform/sdk.ts";
import snapchat from "../../plugins/snapchat/index.ts";
import { createSnapchatEmulator } from "../../plugins/snapchat/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";

const emulator = createSnapchatEmulator();
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let h: ListeningHarness;
let ctx: PluginContext;

const MP4 = new Uint8Array(4096);
MP4.set([0, 0, 0, 0x20, ...Buffer.from("ftypisom")]);
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9]);

beforeAll(async () => {
  served = serveEmulator(emulator);
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => new URL(req.url).pathname.endsWith(".jpg")
      ? new Response(JPEG, { headers: { "content-type": "image/jpeg" } })
      : new Response(MP4, { headers: { "content-type": "video/mp4" } }),
  });
  h = await listeningHarness({
    CRIER_SNAPCHAT_API_URL: served.url,
    CRIER_SNAPCHAT_AUTHORIZE_URL: `${served.url}/login/oauth2/authorize`,
    CRIER_SNAPCHAT_TOKEN_URL: `${served.url}/login/oauth2/access_token`,
    CRIER_SNAPCHAT_CLIENT_ID: "sandbox",
    CRIER_SNAPCHAT_CLIENT_SECRET: "sandbox",
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/snapchat", { token });
  expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  expect(row.username).toBe("sandbox.snap");
  ctx = providerFor(h.ctx, row, { sandbox: false, media: createMediaAccess({ maxBytes: 1024 * 1024, allowAddress: () => true }) }).context;
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

const job = (content: string, file: string, type: "image" | "video", variant: string | null, options: Record<string, unknown> = {}) =>
  ({ content, options, variant, idempotencyToken: crypto.randomUUID(), media: [{ url: `http://127.0.0.1:${media.port}/${file}`, type }] });

test("placements fan one target out: a Spotlight and a public Story of the same video", async () => {
  const options = { placements: ["spotlight", "public_story"] as ("spotlight" | "public_story")[], locale: "fr_FR" };
  expect(snapchat.variants!(options)).toEqual(["spotlight", "public_story"]);
  for (const variant of snapchat.variants!(options)!) {
    const out = await snapchat.publish!(ctx, job("#crier clip", "v.mp4", "video", variant, options));
    expect(out).toMatchObject({ kind: "published", url: "https://www.snapchat.com/add/sandbox.snap" });
  }
  const [spot, story] = emulator.posts().slice(-2);
  expect(spot.options).toEqual({ placement: "spotlight", locale: "fr_FR" });
  expect(story.options).toEqual({ placement: "public_story" });
});

test("a Spotlight of an image is refused for good; a Story of it is fine", async () => {
  expect(await snapchat.publish!(ctx, job("pic", "a.jpg", "image", "spotlight"))).toMatchObject({ kind: "permanent", code: "spotlight_video_only" });
  expect((await snapchat.publish!(ctx, job("pic", "a.jpg", "image", "public_story"))).kind).toBe("published");
});

test("a Spotlight description over 160 characters is refused before uploading", async () => {
  expect(await snapchat.publish!(ctx, job("x".repeat(161), "v.mp4", "video", "spotlight"))).toMatchObject({ kind: "permanent", code: "text_too_long" });
});
