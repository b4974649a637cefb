/**
 * The sandbox inbox: GET /sandbox (page) and GET /v1/sandbox/deliveries (JSON) show what the emulators
 * received for a sandbox profile, newest first, with threads, media and options; platform_post_url of a
 * sandbox target points at its entry; live profiles' keys are refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { authenticate, createKey, createProfile } from "../../../src/modules/keys/service.ts";
import { inboxLink } from "../../../src/modules/sandbox/sign-in.ts";
import { SCOPES } from "../../../src/http/scopes.ts";
import { makePng } from "../../support/media-fixtures.ts";
import { makeVideo } from "../../support/media-files.ts";
import { until } from "../../support/until.ts";
import { connectSandbox, sandboxCluster, type Copy, type SandboxCluster } from "../../support/sandbox-kit.ts";

let cluster: SandboxCluster;
let copy: Copy;
let token: string;
let liveToken: string;
let otherToken: string;
let bluesky: string;
let telegram: string;
const ids: Record<string, string> = {};

async function publish(body: Record<string, unknown>) {
  // Each post a second after the last, so newest first is a real order.
  cluster.clock.advance(1000);
  const res = await cluster.request("POST", "/v1/posts", { token, body });
  expect(res.status).toBe(201);
  await cluster.settle();
  const post = await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token });
  expect(post.body.data.status).toBe("published");
  return post.body.data as { id: string; targets: { target_post_id: string; platform_post_url: string }[] };
}

async function uploadPng(): Promise<string> {
  const ticket = await cluster.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "dot.png", content_type: "image/png" },
  });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "image/png" },
    body: makePng(8, 8),
  });
  expect(put.status).toBeLessThan(300);
  return (await cluster.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token })).body.data.public_url;
}

/** The inbox page as a browser gets it: the key's one-time sign-in link, then the page the cookie opens. */
async function openInbox(key = token): Promise<{ status: number; html: string }> {
  const principal = await authenticate(cluster.db, key, cluster.clock.now());
  const link = principal
    ? inboxLink(copy.ctx.config, principal.keyId, cluster.clock.now())
    : `${cluster.url}/sandbox?sign_in=not.valid`;
  const first = await fetch(link, { redirect: "manual" });
  if (first.status !== 303) return { status: first.status, html: await first.text() };
  expect(first.headers.get("location")).toBe("/sandbox");
  const cookie = first.headers.get("set-cookie")!;
  expect(cookie).toContain("HttpOnly");
  const page = await fetch(`${cluster.url}/sandbox`, { headers: { cookie: cookie.split(";")[0] } });
  return { status: page.status, html: await page.text() };
}

beforeAll(async () => {
  cluster = await sandboxCluster();
  copy = await cluster.start();
  const profile = await createProfile(cluster.db, "sandbox", true);
  ({ token } = await createKey(cluster.db, { name: "k", profileId: profile.id, scopes: [...SCOPES] }));
  const live = await createProfile(cluster.db, "live", false);
  ({ token: liveToken } = await createKey(cluster.db, { name: "k", profileId: live.id, scopes: [...SCOPES] }));
  const other = await createProfile(cluster.db, "other sandbox", true);
  ({ token: otherToken } = await createKey(cluster.db, { name: "k", profileId: other.id, scopes: [...SCOPES] }));
  await connectSandbox(cluster, token, "bluesky");
  await connectSandbox(cluster, token, "telegram");
  const accounts = (await cluster.request("GET", "/v1/accounts", { token })).body.data as {
    id: string;
    platform: string;
  }[];
  bluesky = accounts.find((a) => a.platform === "bluesky")!.id;
  telegram = accounts.find((a) => a.platform === "telegram")!.id;

  // Oldest first: a silent Telegram message, a Bluesky thread of two, then a post with an image and markup.
  ids.silent = (
    await publish({
      content: "quiet news",
      targets: [{ account_id: telegram, platform_options: { disable_notification: true } }],
    })
  ).targets[0].target_post_id;
  const thread = await publish({
    content: "thread",
    targets: [
      { account_id: bluesky, content_override: "first of the thread" },
      { account_id: bluesky, content_override: "second, replying" },
    ],
  });
  ids.root = thread.targets[0].target_post_id;
  ids.reply = thread.targets[1].target_post_id;
  const withImage = await publish({
    content: `<script>alert("x")</script> & <b>bold</b>`,
    media: [{ url: await uploadPng(), type: "image" }],
    targets: [{ account_id: bluesky }],
  });
  ids.image = withImage.targets[0].target_post_id;
  ids.imageUrl = withImage.targets[0].platform_post_url;
}, 60_000);

afterAll(() => cluster.stop());

describe("GET /v1/sandbox/deliveries", () => {
  test("lists what the emulators received, newest first, with thread structure, media and options", async () => {
    const res = await cluster.request("GET", "/v1/sandbox/deliveries", { token });
    expect(res.status).toBe(200);
    const list = res.body.data as {
      id: string;
      text: string;
      platform: string;
      reply_to: string | null;
      media: { type: string; url: string | null }[];
      options: Record<string, unknown>;
    }[];
    // Newest first; the thread's two entries were published at the same (test clock) moment.
    expect(list.map((d) => d.id)).toHaveLength(4);
    expect([list[0].id, list[3].id]).toEqual([ids.image, ids.silent]);
    expect([list[1].id, list[2].id].sort()).toEqual([ids.root, ids.reply].sort());
    const byId = Object.fromEntries(list.map((d) => [d.id, d]));
    expect(byId[ids.reply]).toMatchObject({ text: "second, replying", reply_to: ids.root });
    expect(byId[ids.root].reply_to).toBeNull();
    expect(byId[ids.silent]).toMatchObject({ platform: "telegram", text: "quiet news" });
    expect(byId[ids.silent].options.disable_notification).toBe(true);
    expect(byId[ids.image].media).toHaveLength(1);
    expect(byId[ids.image].media[0].type).toBe("image");
    expect(byId[ids.image].media[0].url).toStartWith("http://127.0.0.1");
    expect(res.body.meta).toEqual({ has_more: false, next_after: null, next_after_id: null });
  });

  test("pages like other lists and filters by account", async () => {
    const first = await cluster.request("GET", "/v1/sandbox/deliveries?limit=3", { token });
    expect(first.body.data).toHaveLength(3);
    expect(first.body.meta.has_more).toBe(true);
    const { next_after, next_after_id } = first.body.meta;
    const rest = await cluster.request(
      "GET",
      `/v1/sandbox/deliveries?limit=3&after=${encodeURIComponent(next_after)}&after_id=${next_after_id}`,
      { token },
    );
    expect(rest.body.data.map((d: { id: string }) => d.id)).toEqual([ids.silent]);
    const tg = await cluster.request("GET", `/v1/sandbox/deliveries?account_id=${telegram}`, { token });
    expect(tg.body.data.map((d: { id: string }) => d.id)).toEqual([ids.silent]);
  });

  test("another profile sees none of it; its account ids are not found", async () => {
    const res = await cluster.request("GET", "/v1/sandbox/deliveries", { token: otherToken });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    const foreign = await cluster.request("GET", `/v1/sandbox/deliveries?account_id=${telegram}`, {
      token: otherToken,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");
  });

  test("a live profile's key is refused, without the key 401", async () => {
    const res = await cluster.request("GET", "/v1/sandbox/deliveries", { token: liveToken });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("not_a_sandbox");
    expect(res.body.error.hint).toBeTruthy();
    expect((await cluster.request("GET", "/v1/sandbox/deliveries")).status).toBe(401);
  });

  test("is described in the OpenAPI document", async () => {
    const doc = (await cluster.request("GET", "/openapi.json")).body;
    const op = doc.paths["/v1/sandbox/deliveries"].get;
    expect(op["x-scope"]).toBe("posts:read");
    // The entry shape is a named component (SandboxDelivery), referenced from the 200 answer.
    expect(JSON.stringify(op.responses["200"])).toContain("#/components/schemas/SandboxDelivery");
    expect(Object.keys(doc.components.schemas.SandboxDelivery.properties)).toContain("reply_to");
  });
});

describe("GET /sandbox", () => {
  test("platform_post_url of a sandbox target points at its inbox entry", () => {
    expect(ids.imageUrl).toBe(`${cluster.url}/sandbox#post-${ids.image}`);
  });

  test("shows each account's posts newest first, escaped, with threads, thumbnails and options", async () => {
    const { status, html } = await openInbox();
    expect(status).toBe(200);
    // Markup in a post is text on the page.
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<b>bold</b>");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;");
    // Newest first within the account; the thread keeps its order, the reply marked as one and linked to its parent.
    const at = (id: string) => html.indexOf(`id="post-${id}"`);
    for (const id of [ids.image, ids.root, ids.reply, ids.silent]) expect(at(id)).toBeGreaterThan(-1);
    expect(at(ids.image)).toBeLessThan(at(ids.root));
    expect(at(ids.root)).toBeLessThan(at(ids.reply));
    expect(html).toMatch(
      new RegExp(`<article class="post reply" id="post-${ids.reply}">[\\s\\S]*?href="#post-${ids.root}"`),
    );
    expect(html).toMatch(new RegExp(`<article class="post" id="post-${ids.root}">`));
    // The image is shown from the server's own storage; the silent Telegram message says so.
    expect(html).toMatch(/<img src="http:\/\/127\.0\.0\.1:\d+\/[^"]+"/);
    expect(html).toMatch(new RegExp(`id="post-${ids.silent}"[\\s\\S]*?<span class="chip">silent</span>`));
    // No script and nothing from elsewhere.
    expect(html).not.toContain("<script");
    expect(html).not.toMatch(/(src|href)="https?:\/\/(?!127\.0\.0\.1)/);
  });

  test("another sandbox profile's inbox does not show these posts", async () => {
    const { status, html } = await openInbox(otherToken);
    expect(status).toBe(200);
    expect(html).not.toContain(ids.image);
  });

  test("a live profile's key gets 403, no key or a wrong key 401, all as pages", async () => {
    const live = await openInbox(liveToken);
    expect(live.status).toBe(403);
    expect(live.html).toContain("live profile");
    const none = await fetch(`${cluster.url}/sandbox`);
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toContain("text/html");
    expect((await openInbox("crier_sandbox_" + "x".repeat(43))).status).toBe(401);
  });
});

test("a path segment naming an object property is no emulator: 404, not a 500", async () => {
  for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
    const res = await fetch(`${cluster.url}/sandbox/${name}/x`);
    expect({ name, status: res.status }).toEqual({ name, status: 404 });
  }
});

describe("a video in the inbox", () => {
  test("shows the poster frame Crier made of its own video, and a given thumbnail_url first", async () => {
    const ticket = await cluster.request("POST", "/v1/media/uploads", {
      token,
      body: { filename: "clip.mp4", content_type: "video/mp4" },
    });
    await fetch(ticket.body.data.upload.signedUrl, {
      method: "PUT",
      headers: { "content-type": "video/mp4" },
      body: makeVideo({ width: 320, height: 240, seconds: 1 }),
    });
    const id = ticket.body.data.media_id;
    const media = await until("the video's poster frame", async () => {
      const got = (await cluster.request("GET", `/v1/media/${id}`, { token })).body.data;
      return got?.poster_url ? (got as { public_url: string; poster_url: string }) : undefined;
    });
    const video = await publish({
      content: "a clip",
      media: [{ url: media.public_url, type: "video" }],
      targets: [{ account_id: telegram }],
    });
    const res = await cluster.request("GET", `/v1/sandbox/deliveries?account_id=${telegram}&limit=1`, { token });
    expect(res.body.data[0]).toMatchObject({ id: video.targets[0].target_post_id });
    expect(res.body.data[0].media[0]).toMatchObject({ type: "video", preview_url: media.poster_url });
    const { html } = await openInbox();
    expect(html).toContain(`<img src="${media.poster_url}"`);

    // A cover the post names wins over the poster frame.
    const cover = await uploadPng();
    await publish({
      content: "a clip with a cover",
      media: [{ url: media.public_url, type: "video", thumbnail_url: cover }],
      targets: [{ account_id: telegram }],
    });
    const covered = await cluster.request("GET", `/v1/sandbox/deliveries?account_id=${telegram}&limit=1`, { token });
    expect(covered.body.data[0].media[0]).toMatchObject({ type: "video", preview_url: cover });
  }, 60_000);
});
