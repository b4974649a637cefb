/**
 * A sandbox profile sees the alt text its sandbox platforms stored: GET /v1/sandbox/deliveries returns it
 * per file (null where the platform takes none), read from what the emulator received, not from the post.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createKey, createProfile } from "../../../src/modules/keys/service.ts";
import { SCOPES } from "../../../src/http/scopes.ts";
import { makeImage } from "../../support/media-files.ts";
import { connectSandbox, sandboxCluster, type SandboxCluster } from "../../support/sandbox-kit.ts";

let cluster: SandboxCluster;
let token: string;
const accounts: Record<string, string> = {};

beforeAll(async () => {
  cluster = await sandboxCluster();
  await cluster.start();
  const profile = await createProfile(cluster.db, "sandbox", true);
  ({ token } = await createKey(cluster.db, { name: "k", profileId: profile.id, scopes: [...SCOPES] }));
  await connectSandbox(cluster, token, "bluesky");
  await connectSandbox(cluster, token, "telegram");
  for (const a of (await cluster.request("GET", "/v1/accounts", { token })).body.data as any[])
    accounts[a.platform] = a.id;
}, 60_000);
afterAll(() => cluster.stop());

async function uploadJpeg(): Promise<string> {
  const ticket = await cluster.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "pier.jpg", content_type: "image/jpeg" },
  });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "image/jpeg" },
    body: await makeImage({ width: 400, height: 300, format: "jpeg" }),
  });
  expect(put.status).toBeLessThan(300);
  return (await cluster.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token })).body.data.public_url;
}

test("the deliveries show the alt text Bluesky stored, and none for Telegram, which takes none", async () => {
  const url = await uploadJpeg();
  const res = await cluster.request("POST", "/v1/posts", {
    token,
    body: {
      content: "the pier",
      media: [{ url, type: "image", alt_text: "A wooden pier in the fog" }],
      targets: [{ account_id: accounts.bluesky }, { account_id: accounts.telegram }],
    },
  });
  expect(res.status).toBe(201);
  await cluster.settle();
  const post = (await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token })).body.data;
  expect(post.status).toBe("published");
  const list = (await cluster.request("GET", "/v1/sandbox/deliveries", { token })).body.data as any[];
  const by = Object.fromEntries(list.map((d) => [d.platform, d]));
  expect(by.bluesky.media[0].alt_text).toBe("A wooden pier in the fog");
  expect(by.telegram.media[0].alt_text).toBeNull();
});
