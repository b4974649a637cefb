/**
 * Mastodon specifics beyond the conformance suite: connecting names a server, whose app is registered once
 * (and again when the server forgot it); files are processed before the status is made; alt text, polls,
 * content warnings, visibility and language reach the status; each server's own limits are checked before
 * anything is sent; replies, first comments, idempotency keys, counts, rate limits and the token's
 * revocation on disconnect. Real HTTP throughout: the API, Crier's connect pages and the emulator.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import plugin from "../../plugins/mastodon/index.ts";
import { createMastodonEmulator, type MastodonEmulator } from "../../plugins/mastodon/emulator.ts";
import { forgetServerLimits } from "../../plugins/mastodon/server.ts";
import { accounts } from "../../src/db/schema.ts";
import { storedApp } from "../../src/modules/connect/server-apps.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createMediaAccess } from "../../src/platform/host/media-guard.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import type { Outcome, PluginContext, PublishJob } from "../../src/platform/sdk.ts";
import {
  formFields,
  listeningHarness,
  submitHostedForm,
  submitShownForm,
  type ListeningHarness,
} from "../support/connect-kit.ts";
import { makePng } from "../support/media-fixtures.ts";
import { makeVideo } from "../support/media-files.ts";

const PNG = makePng(2, 2);
const MP4 = makeVideo({ width: 320, height: 240, seconds: 1 });

let emulator: MastodonEmulator;
let served: ServedEmulator;
let h: ListeningHarness;
let token: string;
let profileId: string;
let media: ReturnType<typeof Bun.serve>;
let ctx: PluginContext;

const file = (name: string) => `http://127.0.0.1:${media.port}/${name}`;

beforeAll(async () => {
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const p = new URL(req.url).pathname;
      if (p.endsWith(".png")) return new Response(PNG, { headers: { "content-type": "image/png" } });
      if (p.endsWith(".mp4")) return new Response(MP4, { headers: { "content-type": "video/mp4" } });
      return new Response("gone", { status: 404 });
    },
  });
  emulator = createMastodonEmulator();
  served = serveEmulator(emulator);
  h = await listeningHarness({ CRIER_MASTODON_API_URL: served.url });
  ({ token, profileId } = await h.profile());
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

async function connect(server: string, as = token) {
  const res = await h.request("POST", "/v1/accounts/connect/mastodon", { token: as });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ mode: "oauth_authorization_url", authorization_url: null });
  return submitHostedForm(res.body.data.hosted_url, { server });
}

async function contextFor(server: string): Promise<PluginContext> {
  const rows = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  const row = rows.find((r) => (r.metadata as { server?: string }).server === server)!;
  const access = createMediaAccess({ maxBytes: 200 * 1024 * 1024, allowAddress: () => true });
  return providerFor(h.ctx, row, { sandbox: false, media: access }).context;
}

let n = 0;
const job = (content: string, extra: Partial<PublishJob> = {}): PublishJob => ({
  content,
  media: [],
  options: {},
  idempotencyToken: `mastodon-test-${++n}`,
  ...extra,
});

async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await plugin.checkStatus!(ctx, out.handle);
  return out;
}

describe("connect", () => {
  test("the page asks for the server, and names it in the form", async () => {
    const res = await h.request("POST", "/v1/accounts/connect/mastodon", { token });
    const page = await fetch(res.body.data.hosted_url);
    expect(page.status).toBe(200);
    expect(formFields(await page.text()).map((f) => f.name)).toEqual(["server"]);
  });

  test("an app is registered once per server, and each server's account is its own", async () => {
    const first = await connect("one.example");
    expect(first.html).toContain("Account connected");
    expect(emulator.apps()).toHaveLength(1);
    expect(emulator.apps()[0]).toMatchObject({
      name: "Crier",
      redirectUris: [`${h.url}/v1/accounts/callback/mastodon`],
      scopes: ["read:accounts", "read:statuses", "write:statuses", "write:media"],
    });
    // Connecting again to the same server (any address form) reuses the app.
    expect((await connect("@someone@One.Example")).html).toContain("Account connected");
    expect(emulator.apps()).toHaveLength(1);
    expect((await connect("https://two.example/@me")).html).toContain("Account connected");
    expect(emulator.apps()).toHaveLength(2);
    const list = await h.request("GET", "/v1/accounts", { token });
    expect(list.body.data.map((a: { username: string }) => a.username).sort()).toEqual([
      "sandbox@one.example",
      "sandbox@two.example",
    ]);
    const rows = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
    expect(rows.map((r) => (r.metadata as { server: string }).server).sort()).toEqual(["one.example", "two.example"]);
    // The client secret is kept only encrypted, with the account's token.
    for (const r of rows) expect(r.credentials).not.toContain(emulator.apps()[0].clientId);
  });

  test("after a restart the app is found again in the accounts connected through it", async () => {
    // What the connect module hands the host: a lookup in the encrypted credentials of stored accounts.
    const lookup = storedApp(h.ctx);
    expect((await lookup("mastodon", { sandbox: false }, "two.example"))?.client_id).toBe(emulator.apps()[1].clientId);
    // A sandbox profile's emulator knows none of the live apps.
    const sandbox = await h.profile({ sandbox: true });
    expect(await lookup("mastodon", { sandbox: true, profileId: sandbox.profileId }, "two.example")).toBeNull();
    expect(await lookup("mastodon", { sandbox: false }, "three.example")).toBeNull();
  });

  test("a server that forgot the app gets a new registration", async () => {
    expect(emulator.apps()).toHaveLength(2);
    // The server lost its data (before 4.3 Mastodon removed unused apps): the stored app is refused.
    emulator.reset();
    expect((await connect("one.example")).html).toContain("Account connected");
    expect(emulator.apps()).toHaveLength(1);
  });

  test("a link connects once: its form sent again after the callback connects nothing", async () => {
    const res = await h.request("POST", "/v1/accounts/connect/mastodon", { token });
    const html = await (await fetch(res.body.data.hosted_url)).text();
    expect((await submitShownForm(res.body.data.hosted_url, html, { server: "one.example" })).html).toContain(
      "Account connected",
    );
    const again = await submitShownForm(res.body.data.hosted_url, html, { server: "one.example" });
    expect(again.status).toBe(400);
    expect(again.html).toContain("already been used");
  });

  test("what is not a server's address is asked again and registers nothing", async () => {
    const before = emulator.apps().length;
    const page = await connect("not a server");
    expect(page.status).toBe(400);
    expect(page.html).toContain("invalid_server");
    expect(emulator.apps()).toHaveLength(before);
  });
});

describe("publishing", () => {
  beforeAll(async () => {
    ctx = await contextFor("one.example");
  });
  beforeEach(() => {
    forgetServerLimits();
    emulator.configure({
      statuses: { max_characters: 500, max_media_attachments: 4 },
      polls: { max_options: 4 },
    });
    emulator.processingReads(1);
  });

  test("a video is processed before the status is made (202, then 206 until ready)", async () => {
    emulator.processingReads(3);
    const first = await plugin.publish!(ctx, job("a video", { media: [{ url: file("v.mp4"), type: "video" }] }));
    expect(first.kind).toBe("submitted");
    const before = emulator.posts().length;
    const out = await settle(first);
    expect(out.kind).toBe("published");
    expect(emulator.posts()).toHaveLength(before + 1);
    expect(
      emulator
        .posts()
        .at(-1)!
        .media.map((m) => m.type),
    ).toEqual(["video"]);
  });

  test("alt text travels as each file's description", async () => {
    const out = await settle(
      await plugin.publish!(
        ctx,
        job("two images", {
          media: [
            { url: file("a.png"), type: "image", alt_text: "a red square" },
            { url: file("b.png"), type: "image", alt_text: "a blue square" },
          ],
        }),
      ),
    );
    expect(out.kind).toBe("published");
    expect(
      emulator
        .posts()
        .at(-1)!
        .media.map((m) => m.alt),
    ).toEqual(["a red square", "a blue square"]);
  });

  test("a poll, a content warning, visibility and language reach the status", async () => {
    const poll = { options: ["yes", "no"], expires_in: 3600, multiple: true };
    const out = await plugin.publish!(
      ctx,
      job("vote?", { options: { poll, spoiler_text: "politics", visibility: "unlisted", language: "en" } }),
    );
    expect(out.kind).toBe("published");
    expect(emulator.posts().at(-1)!.options).toMatchObject({
      visibility: "unlisted",
      spoiler_text: "politics",
      language: "en",
      sensitive: true,
      poll: { options: ["yes", "no"], expires_in: 3600, multiple: true, hide_totals: false },
    });
  });

  test("a poll beside files is refused before anything is uploaded", async () => {
    const before = emulator.posts().length;
    const out = await plugin.publish!(
      ctx,
      job("both", {
        media: [{ url: file("a.png"), type: "image" }],
        options: { poll: { options: ["a", "b"], expires_in: 600 } },
      }),
    );
    expect(out).toMatchObject({ kind: "permanent", code: "poll_with_media" });
    expect(emulator.posts()).toHaveLength(before);
  });

  test("the server's own limits from /api/v2/instance decide, not Mastodon's defaults", async () => {
    emulator.configure({ statuses: { max_characters: 40, max_media_attachments: 1 }, polls: { max_options: 2 } });
    const before = emulator.posts().length;
    const long = await plugin.publish!(ctx, job("x".repeat(41)));
    expect(long).toMatchObject({ kind: "permanent", code: "content_too_long" });
    if (long.kind === "permanent") expect(long.reason).toContain("one.example takes at most 40");
    // A content warning counts toward the limit.
    expect(
      await plugin.publish!(ctx, job("x".repeat(30), { options: { spoiler_text: "y".repeat(11) } })),
    ).toMatchObject({
      code: "content_too_long",
    });
    const files = await plugin.publish!(
      ctx,
      job("two", {
        media: [
          { url: file("a.png"), type: "image" },
          { url: file("b.png"), type: "image" },
        ],
      }),
    );
    expect(files).toMatchObject({ kind: "permanent", code: "too_many_media" });
    const poll = await plugin.publish!(
      ctx,
      job("p", { options: { poll: { options: ["a", "b", "c"], expires_in: 600 } } }),
    );
    expect(poll).toMatchObject({ kind: "permanent", code: "invalid_poll" });
    expect(emulator.posts()).toHaveLength(before);
    // A link counts as 23 characters whatever its length: 16 + 23 fits in 40.
    const link = await plugin.publish!(ctx, job(`read this post: https://example.com/${"a".repeat(80)}`));
    expect(link.kind).toBe("published");
  });

  test("a thread item replies to its parent, and a first comment is a reply without the poll", async () => {
    const root = await plugin.publish!(
      ctx,
      job("root", { options: { poll: { options: ["a", "b"], expires_in: 600 } } }),
    );
    if (root.kind !== "published") throw new Error(root.kind);
    const reply = await plugin.publish!(ctx, job("second", { replyTo: { platformPostId: root.platformPostId } }));
    expect(reply.kind).toBe("published");
    expect(emulator.posts().at(-1)!.replyTo).toBe(root.platformPostId);
    const comment = await plugin.firstComment!.publish(ctx, {
      text: "first comment",
      parent: { platformPostId: root.platformPostId, url: root.url },
      options: { poll: { options: ["a", "b"], expires_in: 600 }, visibility: "unlisted" },
      idempotencyToken: "comment-1",
    });
    expect(comment.kind).toBe("published");
    const last = emulator.posts().at(-1)!;
    expect(last).toMatchObject({ text: "first comment", replyTo: root.platformPostId });
    expect(last.options).toMatchObject({ visibility: "unlisted" });
    expect(last.options!.poll).toBeUndefined();
    // The reconciler finds the reply under its parent.
    const found = await plugin.findPublished!(ctx, {
      content: "second",
      media: [],
      options: {},
      since: new Date(Date.now() - 60_000),
      until: new Date(),
      idempotencyToken: "x",
      replyTo: root.platformPostId,
    });
    expect(found.kind).toBe("found");
  });

  test("the same idempotency key makes one status", async () => {
    const before = emulator.posts().length;
    const a = await plugin.publish!(ctx, job("once", { idempotencyToken: "same-key" }));
    const b = await plugin.publish!(ctx, job("once", { idempotencyToken: "same-key" }));
    if (a.kind !== "published" || b.kind !== "published") throw new Error("not published");
    expect(b.platformPostId).toBe(a.platformPostId);
    expect(emulator.posts()).toHaveLength(before + 1);
  });

  test("a rate limit waits until X-RateLimit-Reset", async () => {
    emulator.failNext({ kind: "rate_limit", retryAfterSeconds: 120, on: "/api/v1/statuses" });
    const out = await plugin.publish!(ctx, job("later"));
    expect(out.kind).toBe("retryable");
    if (out.kind === "retryable") expect(out.retryAfterMs).toBeGreaterThan(100_000);
  });

  test("counts: favourites, replies and reblogs", async () => {
    const out = await plugin.publish!(ctx, job("count me"));
    if (out.kind !== "published") throw new Error(out.kind);
    emulator.engage(out.platformPostId, { favourites: 5, reblogs: 2, replies: 1 });
    const m = await plugin.metrics!(ctx, [out.platformPostId]);
    expect(m[out.platformPostId]).toMatchObject({ likes: 5, shares: 2, comments: 1, views: null });
  });
});

describe("at creation, through the API", () => {
  async function mastodonAccount(): Promise<string> {
    const list = await h.request("GET", "/v1/accounts", { token });
    return list.body.data.find((a: { username: string; status: string }) => a.username === "sandbox@one.example").id;
  }

  test("options Mastodon does not have, and text past the default limit, are a 400 naming the target", async () => {
    const account_id = await mastodonAccount();
    const bad = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "hi", targets: [{ account_id, platform_options: { visibility: "friends" } }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_platform_options");
    const poll = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: "hi",
        targets: [{ account_id, platform_options: { poll: { options: ["only one"], expires_in: 600 } } }],
      },
    });
    expect(poll.status).toBe(400);
    const long = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "x".repeat(501), targets: [{ account_id }] },
    });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("content_too_long");
  });

  test("a long link counts as 23 characters when the post is checked", async () => {
    const account_id = await mastodonAccount();
    const res = await h.request("POST", "/v1/posts/validate", {
      token,
      body: { content: `${"x".repeat(470)} https://example.com/${"a".repeat(200)}`, targets: [{ account_id }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.ok).toBe(true);
    expect(res.body.data.targets[0].text).toEqual({ length: 494, limit: 500, unit: "mastodon" });
  });
});

describe("the emulator refuses what Mastodon refuses", () => {
  const bearer = () => ({
    authorization: `Bearer ${String(ctx.credentials.access_token)}`,
    "content-type": "application/json",
  });

  test("a bad token is 401, a status too long or without text is 422", async () => {
    const bad = await fetch(`${served.url}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: "Bearer nope", "content-type": "application/json" },
      body: JSON.stringify({ status: "hi" }),
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ error: "The access token is invalid" });
    const long = await fetch(`${served.url}/api/v1/statuses`, {
      method: "POST",
      headers: bearer(),
      body: JSON.stringify({ status: "x".repeat(501) }),
    });
    expect(long.status).toBe(422);
    const blank = await fetch(`${served.url}/api/v1/statuses`, { method: "POST", headers: bearer(), body: "{}" });
    expect(blank.status).toBe(422);
  });

  test("a file not processed yet cannot be attached", async () => {
    emulator.processingReads(5);
    const form = new FormData();
    form.set("file", new Blob([MP4], { type: "video/mp4" }), "v.mp4");
    const up = await fetch(`${served.url}/api/v2/media`, {
      method: "POST",
      headers: { authorization: bearer().authorization },
      body: form,
    });
    expect(up.status).toBe(202);
    const { id, url } = (await up.json()) as { id: string; url: string | null };
    expect(url).toBeNull();
    const post = await fetch(`${served.url}/api/v1/statuses`, {
      method: "POST",
      headers: bearer(),
      body: JSON.stringify({ status: "too soon", media_ids: [id] }),
    });
    expect(post.status).toBe(422);
    const read = await fetch(`${served.url}/api/v1/media/${id}`, {
      headers: { authorization: bearer().authorization },
    });
    expect(read.status).toBe(206);
  });
});

test("disconnecting revokes Crier's token on the server", async () => {
  const list = await h.request("GET", "/v1/accounts", { token });
  const two = list.body.data.find((a: { username: string }) => a.username === "sandbox@two.example");
  const before = emulator.revoked();
  const res = await h.request("DELETE", `/v1/accounts/${two.id}`, { token });
  expect(res.status).toBe(200);
  expect(emulator.revoked()).toBe(before + 1);
});

test("each account shows its own server's limits, and creation checks a post against them", async () => {
  const own = await h.profile();
  const limits = async (server: string, max_characters: number, max_media_attachments: number) => {
    forgetServerLimits();
    emulator.configure({ statuses: { max_characters, max_media_attachments } });
    await connect(server, own.token);
    const list = await h.request("GET", "/v1/accounts", { token: own.token });
    return list.body.data.find((a: { username: string }) => a.username.endsWith(`@${server}`));
  };
  const big = await limits("big.example", 5000, 6);
  const small = await limits("small.example", 40, 1);
  emulator.configure({ statuses: { max_characters: 500, max_media_attachments: 4 } });
  forgetServerLimits();
  expect(big.media_requirements.file_constraints).toMatchObject({ maxFiles: 6, maxImageFiles: 6 });
  expect(small.media_requirements.file_constraints).toMatchObject({ maxFiles: 1 });

  const later = new Date(Date.now() + 86_400_000).toISOString();
  const create = (account: string, content: string) =>
    h.request("POST", "/v1/posts", {
      token: own.token,
      body: { content, publish_at: later, targets: [{ account_id: account }] },
    });
  // 800 characters are over Mastodon's default 500, but within big.example's 5000.
  expect((await create(big.id, "x".repeat(800))).status).toBe(201);
  const refused = await create(small.id, "x".repeat(41));
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe("content_too_long");
  expect(refused.body.error.message).toContain("40");
  const validated = await h.request("POST", "/v1/posts/validate", {
    token: own.token,
    body: { content: "x".repeat(41), targets: [{ account_id: big.id }, { account_id: small.id }] },
  });
  expect(validated.body.data.targets.map((t: { text: { limit: number } }) => t.text.limit)).toEqual([5000, 40]);
});
