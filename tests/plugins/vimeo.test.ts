/** Vimeo specifics beyond the conformance suite: title and privacy, quota, a video Vimeo cannot transcode. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createMediaAccess } from "../../src/platform/media.ts";
import { providerFor } from "../../src/platform/provider.ts";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import vimeo, { titleOf } from "../../plugins/vimeo/index.ts";
import { createVimeoEmulator, type VimeoEmulator } from "../../plugins/vimeo/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: VimeoEmulator;
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let h: ListeningHarness;
let ctx: PluginContext;

const MP4 = new Uint8Array(2048);
MP4.set([0, 0, 0, 0x20, ...Buffer.from("ftypisom")]);

beforeAll(async () => {
  emulator = createVimeoEmulator();
  served = serveEmulator(emulator);
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => new Response(new URL(req.url).pathname === "/good.mp4" ? MP4 : new Uint8Array(2048), { headers: { "content-type": "video/mp4" } }),
  });
  h = await listeningHarness({
    CRIER_VIMEO_API_URL: served.url,
    CRIER_VIMEO_AUTHORIZE_URL: `${served.url}/oauth/authorize`,
    CRIER_VIMEO_TOKEN_URL: `${served.url}/oauth/access_token`,
    CRIER_VIMEO_CLIENT_ID: "sandbox",
    CRIER_VIMEO_CLIENT_SECRET: "sandbox",
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/vimeo", { token });
  expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  ctx = providerFor(h.ctx, row, { sandbox: false, media: createMediaAccess({ maxBytes: 1024 * 1024, allowAddress: () => true }) }).context;
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

const job = (content: string, file = "good.mp4", options: Record<string, unknown> = {}) =>
  ({ content, options, idempotencyToken: crypto.randomUUID(), media: [{ url: `http://127.0.0.1:${media.port}/${file}`, type: "video" as const }] });

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
  const out = await settle(await vimeo.publish!(ctx, job("My film\nabout things", "good.mp4", { privacy_view: "unlisted" })));
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.url).toMatch(new RegExp(`^https://vimeo.com/${out.platformPostId}/[0-9a-f]{10}$`));
  expect(emulator.posts().at(-1)).toMatchObject({ text: "My film\nMy film\nabout things", options: { privacy_view: "unlisted" } });
});

test("a video Vimeo cannot transcode fails for good", async () => {
  const out = await settle(await vimeo.publish!(ctx, job("broken", "bad.mp4")));
  expect(out).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
});

test("a used-up upload quota is permanent, not retried", async () => {
  emulator.exhaustQuota();
  expect(await vimeo.publish!(ctx, job("over quota"))).toMatchObject({ kind: "permanent", code: "quota_exceeded" });
});
