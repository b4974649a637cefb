/** Facebook specifics beyond the conformance suite: one account per Page, attached photos, link posts, Page tokens, metrics. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createMediaAccess } from "../../src/platform/media.ts";
import { providerFor } from "../../src/platform/provider.ts";
import type { PluginContext } from "../../src/platform/sdk.ts";
import facebook from "../../plugins/facebook/index.ts";
import { createFacebookEmulator, type FacebookEmulator } from "../../plugins/facebook/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: FacebookEmulator;
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let h: ListeningHarness;
let pages: PluginContext[];

beforeAll(async () => {
  emulator = createFacebookEmulator();
  emulator.addPage("Second Page");
  served = serveEmulator(emulator);
  // The first bytes of a PNG: Facebook judges photos by their bytes.
  const png = new Uint8Array(64);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  media = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(png, { headers: { "content-type": "image/png" } }) });
  h = await listeningHarness({
    CRIER_FACEBOOK_API_URL: served.url,
    CRIER_FACEBOOK_AUTHORIZE_URL: `${served.url}/v24.0/dialog/oauth`,
    CRIER_FACEBOOK_TOKEN_URL: `${served.url}/v24.0/oauth/access_token`,
    CRIER_FACEBOOK_CLIENT_ID: "sandbox",
    CRIER_FACEBOOK_CLIENT_SECRET: "sandbox",
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/facebook", { token });
  const page = await followAuthorization(res.body.data.authorization_url);
  expect(page.html).toContain("2 Facebook Page accounts are connected");
  const rows = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  expect(rows.map((r) => r.username).sort()).toEqual(["Sandbox Page", "Second Page"]);
  pages = rows.map((row) => providerFor(h.ctx, row, { sandbox: false, media: createMediaAccess({ maxBytes: 1024 * 1024, allowAddress: () => true }) }).context);
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

const png = () => ({ url: `http://127.0.0.1:${media.port}/a.png`, type: "image" as const });
const job = (content: string, items: ReturnType<typeof png>[] = []) => ({ content, media: items, options: {}, idempotencyToken: crypto.randomUUID() });

test("each Page posts with its own token", async () => {
  for (const ctx of pages) {
    const out = await facebook.publish!(ctx, job(`hello from ${ctx.account.username}`));
    if (out.kind !== "published") throw new Error(out.kind);
    expect(out.platformPostId).toStartWith(`${ctx.account.remoteId}_`);
  }
});

test("several photos are attached to one feed post", async () => {
  const out = await facebook.publish!(pages[0], job("album", [png(), png(), png()]));
  expect(out).toMatchObject({ kind: "published" });
  expect(emulator.posts().at(-1)!.media).toHaveLength(3);
});

test("a post that is only a link is a link post", async () => {
  const out = await facebook.publish!(pages[0], job("https://example.com/article"));
  expect(out.kind).toBe("published");
});

test("metrics read reactions, comments, shares and media views", async () => {
  const out = await facebook.publish!(pages[0], job("measured"));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { reactions: 5, comments: 2, shares: 1, views: 80 });
  expect((await facebook.metrics!(pages[0], [out.platformPostId]))[out.platformPostId]).toEqual({ views: 80, likes: 5, comments: 2, shares: 1, saves: null });
});
