/** Threads specifics beyond the conformance suite: carousels, reply chains, media Threads cannot download, insights. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { providerFor } from "../../src/platform/provider.ts";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import threads from "../../plugins/threads/index.ts";
import { createThreadsEmulator, type ThreadsEmulator } from "../../plugins/threads/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: ThreadsEmulator;
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let h: ListeningHarness;
let ctx: PluginContext;

beforeAll(async () => {
  emulator = createThreadsEmulator();
  served = serveEmulator(emulator);
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => {
      const p = new URL(req.url).pathname;
      if (p.endsWith(".jpg")) return new Response(new Uint8Array(100), { headers: { "content-type": "image/jpeg" } });
      if (p.endsWith(".mp4")) return new Response(new Uint8Array(100), { headers: { "content-type": "video/mp4" } });
      return new Response("gone", { status: 404 });
    },
  });
  h = await listeningHarness({
    CRIER_THREADS_API_URL: served.url,
    CRIER_THREADS_AUTHORIZE_URL: `${served.url}/oauth/authorize`,
    CRIER_THREADS_TOKEN_URL: `${served.url}/oauth/access_token`,
    CRIER_THREADS_CLIENT_ID: "sandbox",
    CRIER_THREADS_CLIENT_SECRET: "sandbox",
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/threads", { token });
  expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  expect(row.username).toBe("sandbox.threads");
  ctx = providerFor(h.ctx, row, { sandbox: false }).context;
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

const url = (f: string) => `http://127.0.0.1:${media.port}/${f}`;
const job = (content: string, extra: Record<string, unknown> = {}) => ({ content, media: [], options: {}, idempotencyToken: crypto.randomUUID(), ...extra });
async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await threads.checkStatus!(ctx, out.handle);
  return out;
}

test("a carousel of photos and a video is one post", async () => {
  const out = await settle(await threads.publish!(ctx, job("album", { media: [{ url: url("a.jpg"), type: "image" }, { url: url("b.jpg"), type: "image" }, { url: url("c.mp4"), type: "video" }] })));
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.url).toStartWith("https://www.threads.com/@sandbox.threads/post/");
  expect(emulator.posts().at(-1)!.media.map((m) => m.type)).toEqual(["image", "image", "video"]);
});

test("a thread is a reply chain", async () => {
  const first = await settle(await threads.publish!(ctx, job("one")));
  if (first.kind !== "published") throw new Error(first.kind);
  const second = await settle(await threads.publish!(ctx, job("two", { replyTo: { platformPostId: first.platformPostId } })));
  expect(second.kind).toBe("published");
  expect(emulator.posts().at(-1)!.replyTo).toBe(first.platformPostId);
});

test("media Threads cannot download fail the post for good", async () => {
  const out = await settle(await threads.publish!(ctx, job("missing", { media: [{ url: url("missing.png"), type: "image" }] })));
  expect(out).toMatchObject({ kind: "permanent", code: "FAILED_DOWNLOADING_IMAGE" });
});

test("insights become views, likes, replies and reposts", async () => {
  const out = await settle(await threads.publish!(ctx, job("measured")));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { views: 40, likes: 4, reposts: 2 });
  const m = await threads.metrics!(ctx, [out.platformPostId]);
  expect(m[out.platformPostId]).toMatchObject({ views: 40, likes: 4, shares: 2, comments: 0 });
});
