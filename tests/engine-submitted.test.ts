import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../src/db/schema.ts";
import { createEngine, type Engine } from "../src/engine/scheduler.ts";
import { serveEmulator, type ServedEmulator } from "../src/platform/emulator-kit.ts";
import { createXEmulator, type XEmulator } from "../plugins/twitter/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "./support/connect-kit.ts";
import { makeMp4 } from "./support/media-fixtures.ts";

// A platform that is still processing (X transcoding a video): the target is `submitted`, the engine
// polls it through the plugin's checkStatus, and the post appears exactly once when the platform is done.
// The video is uploaded to Crier's own storage and read from there by the engine, over real HTTP.

let emulator: XEmulator;
let served: ServedEmulator;
let h: ListeningHarness;
let engine: Engine;
let token: string;
let accountId: string;

beforeAll(async () => {
  emulator = createXEmulator();
  served = serveEmulator(emulator);
  h = await listeningHarness({
    CRIER_TWITTER_API_URL: served.url,
    CRIER_TWITTER_AUTHORIZE_URL: `${served.url}/oauth/authorize`,
    CRIER_TWITTER_TOKEN_URL: `${served.url}/oauth/token`,
    CRIER_TWITTER_CLIENT_ID: "sandbox",
    CRIER_TWITTER_CLIENT_SECRET: "sandbox",
  });
  let profileId: string;
  ({ token, profileId } = await h.profile());
  const res = await h.request("POST", "/v1/accounts/connect/twitter", { token });
  expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  [{ id: accountId }] = await h.db.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.profileId, profileId));
  engine = createEngine(h.ctx, { submitPollMs: 10_000 });
});
afterAll(async () => {
  await engine?.stop();
  await h?.stop();
  await served?.stop();
});

test("a video X is still processing: submitted, polled, then published once", async () => {
  const ticket = await h.request("POST", "/v1/media/uploads", { token, body: { filename: "clip.mp4", content_type: "video/mp4" } });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, { method: "PUT", headers: { "content-type": "video/mp4" }, body: makeMp4(200_000) });
  expect(put.status).toBeLessThan(300);
  const media = await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token });
  expect(media.status).toBe(200);

  const created = await h.request("POST", "/v1/posts", { token, body: { content: "watch this", media: [{ url: media.body.data.public_url, type: "video" }], targets: [{ account_id: accountId }] } });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  const read = async () => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data;

  await engine.runUntilIdle();
  let post = await read();
  expect(post.status).toBe("processing");
  expect(post.targets[0]).toMatchObject({ status: "submitted", attempts: 1, platform_post_id: null });
  expect(emulator.posts()).toHaveLength(0);
  // A submitted target cannot be deleted or cancelled while the platform works on it.
  expect((await h.request("DELETE", `/v1/posts/${id}`, { token })).body.error.code).toBe("post_processing");

  h.clock.advance(10_000);
  await engine.runUntilIdle();
  post = await read();
  expect(post.status).toBe("published");
  expect(post.targets[0].platform_post_id).toMatch(/^\d+$/);
  expect(emulator.posts()).toHaveLength(1);
  expect(emulator.posts()[0].text).toBe("watch this");

  h.clock.advance(3600_000);
  await engine.runUntilIdle();
  expect(emulator.posts()).toHaveLength(1);
  expect((await read()).targets[0].attempts).toBe(1);
});
