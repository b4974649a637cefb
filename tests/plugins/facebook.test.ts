/** Facebook specifics beyond the conformance suite: one account per Page, attached photos, link posts, Page tokens, metrics. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PluginContext } from "../../src/platform/sdk.ts";
import facebook from "../../plugins/facebook/index.ts";
import { createFacebookEmulator, type FacebookEmulator } from "../../plugins/facebook/emulator.ts";
import { job, oauthRig, type OAuthRig } from "./support.ts";
import { makePng } from "../support/media-fixtures.ts";

let emulator: FacebookEmulator;
let rig: OAuthRig<FacebookEmulator>;
let pages: PluginContext[];

beforeAll(async () => {
  emulator = createFacebookEmulator();
  emulator.addPage("Second Page");
  // A real PNG: Facebook judges photos by their bytes.
  const png = makePng(2, 2);
  rig = await oauthRig(emulator, {
    authorizePath: "/v24.0/dialog/oauth",
    tokenPath: "/v24.0/oauth/access_token",
    media: () => new Response(png, { headers: { "content-type": "image/png" } }),
    mediaMaxBytes: 1024 * 1024,
  });
  expect(rig.connectPage.html).toContain("2 Facebook Page accounts are connected");
  const rows = rig.rows;
  expect(rows.map((r) => r.username).sort()).toEqual(["Sandbox Page", "Second Page"]);
  pages = rows.map((row) => rig.context(row));
});
afterAll(() => rig.stop());

const png = () => ({ url: `${rig.mediaUrl}/a.png`, type: "image" as const });

test("each Page posts with its own token", async () => {
  for (const ctx of pages) {
    const out = await facebook.publish!(ctx, job(`hello from ${ctx.account.username}`));
    if (out.kind !== "published") throw new Error(out.kind);
    expect(out.platformPostId).toStartWith(`${ctx.account.remoteId}_`);
  }
});

test("several photos are attached to one feed post", async () => {
  const out = await facebook.publish!(pages[0], job("album", { media: [png(), png(), png()] }));
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
  expect((await facebook.metrics!(pages[0], [out.platformPostId]))[out.platformPostId]).toEqual({
    views: 80,
    likes: 5,
    comments: 2,
    shares: 1,
    saves: null,
  });
});
