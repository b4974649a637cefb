import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createXEmulator, type XEmulator } from "../../plugins/twitter/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";
import { makeMp4 } from "../support/media-fixtures.ts";

// A platform that is still processing (X transcoding a video): the target is `submitted`, the engine
// polls it through the plugin's checkStatus, and the post appears exactly once when the platform is done.
// The video is uploaded to Crier's own storage and read from there by the engine, over real HTTP.

let emulator: XEmulator;
let served: ServedEmulator;
let h: ListeningHarness;
let engine: Engine;
let token: string;
let accountId: string;

// While set, X's media STATUS answers 503: the platform cannot say how processing goes.
let statusDown = false;

beforeAll(async () => {
  emulator = createXEmulator();
  const flaky = Object.assign(Object.create(emulator) as XEmulator, {
    handle: (req: Request, path: string) =>
      statusDown && new URL(req.url).searchParams.get("command") === "STATUS"
        ? new Response("unavailable", { status: 503 })
        : emulator.handle(req, path),
  });
  served = serveEmulator(flaky);
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
  [{ id: accountId }] = await h.db.db
    .select({ id: accounts.id })
    .from(accounts)
    .where(eq(accounts.profileId, profileId));
  engine = createEngine(h.ctx, { submitPollMs: 10_000 });
});
afterAll(async () => {
  await engine?.stop();
  await h?.stop();
  await served?.stop();
});

/** Uploads a video to Crier's storage and creates a post of it now; returns the post id. */
async function videoPost(content: string): Promise<string> {
  const ticket = await h.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "clip.mp4", content_type: "video/mp4" },
  });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "video/mp4" },
    body: makeMp4(200_000),
  });
  expect(put.status).toBeLessThan(300);
  const media = await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token });
  expect(media.status).toBe(200);

  const created = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content,
      media: [{ url: media.body.data.public_url, type: "video" }],
      targets: [{ account_id: accountId }],
    },
  });
  expect(created.status).toBe(201);
  return created.body.data.id;
}

const readPost = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data;
const postsWith = (text: string) => emulator.posts().filter((p) => p.text === text);

test("a video X is still processing: submitted, polled, then published once", async () => {
  const id = await videoPost("watch this");
  const read = () => readPost(id);

  await engine.runUntilIdle();
  let post = await read();
  expect(post.status).toBe("processing");
  expect(post.targets[0]).toMatchObject({ status: "submitted", attempts: 1, platform_post_id: null });
  expect(postsWith("watch this")).toHaveLength(0);
  // A submitted target cannot be deleted or cancelled while the platform works on it.
  expect((await h.request("DELETE", `/v1/posts/${id}`, { token })).body.error.code).toBe("post_processing");

  h.clock.advance(10_000);
  await engine.runUntilIdle();
  post = await read();
  expect(post.status).toBe("published");
  expect(post.targets[0].platform_post_id).toMatch(/^\d+$/);
  expect(postsWith("watch this")).toHaveLength(1);

  h.clock.advance(3600_000);
  await engine.runUntilIdle();
  expect(postsWith("watch this")).toHaveLength(1);
  expect((await read()).targets[0].attempts).toBe(1);
});

test("a status check X cannot answer keeps the target submitted until the next check, which publishes it once", async () => {
  const id = await videoPost("checked twice");
  await engine.runUntilIdle();
  expect((await readPost(id)).targets[0].status).toBe("submitted");

  statusDown = true;
  h.clock.advance(10_000);
  await engine.runUntilIdle();
  let post = await readPost(id);
  expect(post.status).toBe("processing");
  expect(post.targets[0]).toMatchObject({ status: "submitted", attempts: 1, error_code: null });
  expect(postsWith("checked twice")).toHaveLength(0);
  // Not checked again before its next poll is due.
  h.clock.advance(5_000);
  statusDown = false;
  await engine.runUntilIdle();
  expect((await readPost(id)).targets[0].status).toBe("submitted");

  h.clock.advance(5_000);
  await engine.runUntilIdle();
  post = await readPost(id);
  expect(post.status).toBe("published");
  expect(postsWith("checked twice")).toHaveLength(1);
});

test("still processing at the deadline: failed outcome_unknown, never checked again", async () => {
  const id = await videoPost("too slow");
  await engine.runUntilIdle();
  statusDown = true;
  try {
    h.clock.advance(2 * 3600_000 + 1);
    await engine.runUntilIdle();
  } finally {
    statusDown = false;
  }
  const post = await readPost(id);
  expect(post.status).toBe("failed");
  expect(post.targets[0]).toMatchObject({ status: "failed", error_code: "outcome_unknown" });
  expect(post.targets[0].error).toContain("still processing the post at the deadline");
  h.clock.advance(3600_000);
  await engine.runUntilIdle();
  expect((await readPost(id)).targets[0].status).toBe("failed");
  expect(postsWith("too slow")).toHaveLength(0);
});
