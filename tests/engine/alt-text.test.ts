import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createXEmulator, type XEmulator } from "../../plugins/twitter/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";
import { makeImage } from "../support/media-files.ts";

// Alt text end to end: a real JPEG uploaded to Crier's storage, a post of it with media[].alt_text through
// POST /v1/posts, kept in the database, handed by the engine to the X plugin, which sets it on the uploaded
// media (POST /2/media/metadata) before the post carries it; the X emulator stores it with the file.

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
  [{ id: accountId }] = await h.db.db
    .select({ id: accounts.id })
    .from(accounts)
    .where(eq(accounts.profileId, profileId));
  engine = createEngine(h.ctx, {});
});
afterAll(async () => {
  await engine?.stop();
  await h?.stop();
  await served?.stop();
});

async function uploadJpeg(): Promise<string> {
  const ticket = await h.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "harbour.jpg", content_type: "image/jpeg" },
  });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "image/jpeg" },
    body: await makeImage({ width: 800, height: 600, format: "jpeg" }),
  });
  expect(put.status).toBeLessThan(300);
  const media = await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token });
  expect(media.status).toBe(200);
  return media.body.data.public_url;
}

test("the alt text given at creation is the alt text X stores with the published image", async () => {
  const url = await uploadJpeg();
  const alt = "A harbour at dawn, three fishing boats moored along the pier.";
  const created = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "morning",
      media: [
        { url, type: "image", alt_text: alt },
        { url, type: "image" },
      ],
      targets: [{ account_id: accountId }],
    },
  });
  expect(created.status).toBe(201);
  await engine.runUntilIdle();
  const post = (await h.request("GET", `/v1/posts/${created.body.data.id}`, { token })).body.data;
  expect(post.status).toBe("published");
  expect(post.media[0].alt_text).toBe(alt);
  const published = emulator.posts().find((p) => p.text === "morning")!;
  expect(published.media.map((m) => m.alt)).toEqual([alt, undefined]);
  // The metadata call names the uploaded media and carries the text in X's shape.
  const calls = emulator.requests().filter((r) => r.path === "/2/media/metadata");
  expect(calls).toHaveLength(1);
  expect(calls[0].body).toMatchObject({ metadata: { alt_text: { text: alt } } });
});
