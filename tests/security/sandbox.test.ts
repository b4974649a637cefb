/**
 * Security issue 26, item 1: the sandbox emulators are not served on the public listener. Only the OAuth
 * authorize step a browser must see (and Farcaster's approval page) answers there, and only with a valid
 * signed connect state of a sandbox profile; every other /sandbox/<platform>/… request is a 404. Every
 * response without a page of its own carries `Content-Security-Policy: default-src 'none'; sandbox` and
 * `nosniff`; the emulators refuse non-media blobs and pull media through the media guard; and each
 * sandbox profile has emulators of its own. Item 7: the inbox link is a short-lived, single-use sign-in
 * link instead of a whole API key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { issueState } from "../../src/modules/connect/state.ts";
import { createKey, createProfile, revokeKey } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { connectSandbox, sandboxCluster } from "../support/sandbox-kit.ts";
import { INBOX_LINK_TTL_MS, inboxLink } from "../../src/modules/sandbox/sign-in.ts";
import { createMediaAccess } from "../../src/platform/host/media-guard.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import type { MediaItem, Outcome, Plugin, PluginContext } from "../../src/platform/sdk.ts";
import {
  followAuthorization,
  listeningHarness,
  submitHostedForm,
  type ListeningHarness,
} from "../support/connect-kit.ts";
import { makeJpeg, makePng } from "../support/media-fixtures.ts";

let h: ListeningHarness;
let token: string;
let profileId: string;

beforeAll(async () => {
  h = await listeningHarness();
  ({ token, profileId } = await h.profile({ sandbox: true }));
});
afterAll(() => h.stop());

const SANDBOX_CSP = "default-src 'none'; sandbox";

function expectLockedDown(res: Response, what: string) {
  expect({ what, csp: res.headers.get("content-security-policy") }).toEqual({ what, csp: SANDBOX_CSP });
  expect({ what, nosniff: res.headers.get("x-content-type-options") }).toEqual({ what, nosniff: "nosniff" });
  expect({ what, html: (res.headers.get("content-type") ?? "").includes("text/html") }).toEqual({ what, html: false });
}

async function sandboxAccount(platform: string, owner = token) {
  const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token: owner });
  expect(res.status).toBe(201);
  const page = res.body.data.authorization_url
    ? await followAuthorization(res.body.data.authorization_url)
    : await submitHostedForm(res.body.data.hosted_url);
  expect(page.html).toContain("Account connected");
  const list = await h.request("GET", "/v1/accounts", { token: owner });
  const id = list.body.data.find((a: { platform: string }) => a.platform === platform).id;
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, id));
  return row;
}

describe("the emulators are not served on the public listener", () => {
  test("every emulator refuses unauthenticated requests, whatever the path or method", async () => {
    const platforms = h.ctx.platforms
      .list()
      .map((p) => p.platform)
      .filter((p) => h.ctx.platforms.hasEmulator(p));
    expect(platforms.length).toBeGreaterThanOrEqual(15);
    for (const platform of platforms) {
      for (const [method, path] of [
        ["GET", ""],
        ["GET", "/"],
        ["POST", "/oauth/token"],
        ["GET", "/oauth/authorize"],
        ["POST", "/oauth/authorize"],
        ["GET", "/me"],
        ["POST", "/2/tweets"],
        ["GET", "/v2/farcaster/user/bulk?fids=1"],
        ["POST", "/xrpc/com.atproto.server.createSession"],
      ]) {
        const res = await fetch(`${h.url}/sandbox/${platform}${path}`, {
          method,
          redirect: "manual",
          headers: { "content-type": "application/json", authorization: "Bearer sandbox" },
          body: method === "POST" ? JSON.stringify({ identifier: "eve.test", password: "x" }) : undefined,
        });
        const what = `${method} /sandbox/${platform}${path}`;
        const expected = path === "/oauth/authorize" && method === "GET" ? 400 : 404;
        expect({ what, status: res.status }).toEqual({ what, status: expected });
        expect({ what, location: res.headers.get("location") }).toEqual({ what, location: null });
        expectLockedDown(res, what);
      }
    }
  });

  test("the attack of the issue: no emulator session, no blob served as HTML", async () => {
    const session = await fetch(`${h.url}/sandbox/bluesky/xrpc/com.atproto.server.createSession`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: "eve.test", password: "anything" }),
    });
    expect(session.status).toBe(404);
    expect((await session.json()).error.code).toBe("not_found");
  });

  test("the platforms' own authorize paths redirect nowhere (no open redirect)", async () => {
    const evil = encodeURIComponent("https://evil.example/cb");
    for (const path of [
      "/facebook/dialog/oauth",
      "/reddit/api/v1/authorize",
      "/tiktok/v2/auth/authorize/",
      "/snapchat/login/oauth2/authorize",
    ]) {
      const res = await fetch(`${h.url}/sandbox${path}?client_id=sandbox&client_key=sandbox&redirect_uri=${evil}`, {
        redirect: "manual",
      });
      expect({ path, status: res.status, location: res.headers.get("location") }).toEqual({
        path,
        status: 404,
        location: null,
      });
    }
  });
});

describe("the sandbox authorize step needs a valid signed connect state", () => {
  const authorizeUrl = (state: string | null, redirect = `${h.url}/v1/accounts/callback/twitter`) =>
    `${h.url}/sandbox/twitter/oauth/authorize?response_type=code&client_id=sandbox&redirect_uri=${encodeURIComponent(
      redirect,
    )}${state === null ? "" : `&state=${encodeURIComponent(state)}`}`;

  async function freshState(): Promise<string> {
    const res = await h.request("POST", "/v1/accounts/connect/twitter", { token });
    return new URL(res.body.data.authorization_url).searchParams.get("state")!;
  }

  test("a valid state redirects to Crier's own callback, and the flow connects", async () => {
    const res = await h.request("POST", "/v1/accounts/connect/twitter", { token });
    const first = await fetch(res.body.data.authorization_url, { redirect: "manual" });
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toStartWith(`${h.url}/v1/accounts/callback/twitter?`);
    expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  });

  test("a missing, forged, expired, other platform's or live profile's state is refused", async () => {
    const good = await freshState();
    const [payload, mac] = good.split(".");
    const live = issueState(h.ctx.config.secretKey, { profileId, platform: "twitter", sandbox: false }, h.clock.now());
    const other = issueState(h.ctx.config.secretKey, { profileId, platform: "linkedin", sandbox: true }, h.clock.now());
    const cases: [string, string | null][] = [
      ["missing", null],
      ["forged", `${payload}.${mac.slice(0, -2)}AA`],
      ["unsigned", payload],
      ["another platform's", other],
      ["a live profile's", live],
    ];
    for (const [what, state] of cases) {
      const res = await fetch(authorizeUrl(state), { redirect: "manual" });
      expect({ what, status: res.status, location: res.headers.get("location") }).toEqual({
        what,
        status: 400,
        location: null,
      });
      expectLockedDown(res, what);
    }
    h.clock.advance(5 * 60_000 + 1000);
    const expired = await fetch(authorizeUrl(good), { redirect: "manual" });
    expect(expired.status).toBe(400);
  });

  test("a valid state does not make it an open redirect", async () => {
    const res = await fetch(authorizeUrl(await freshState(), "https://evil.example/cb"), { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });

  test("a state already used at the callback opens the authorize step no more", async () => {
    const res = await h.request("POST", "/v1/accounts/connect/twitter", { token });
    expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
    const again = await fetch(res.body.data.authorization_url, { redirect: "manual" });
    expect(again.status).toBe(400);
  });
});

describe("an emulator's browser page (Farcaster's approval link)", () => {
  test("opens only with the flow's state, which the connect page adds to the link", async () => {
    const res = await h.request("POST", "/v1/accounts/connect/farcaster", { token });
    const page = await (await fetch(res.body.data.hosted_url)).text();
    const link = /<a href="([^"]*)" target="_blank"/.exec(page)![1].replace(/&amp;/g, "&");
    const url = new URL(link);
    expect(url.pathname).toStartWith("/sandbox/farcaster/approve/");
    expect(url.searchParams.get("state")).toBe(new URL(res.body.data.hosted_url).searchParams.get("state"));
    const bare = await fetch(`${url.origin}${url.pathname}`);
    expect(bare.status).toBe(400);
    expectLockedDown(bare, "approval without state");
    const approved = await fetch(link);
    expect(approved.status).toBe(200);
    expectLockedDown(approved, "approval");
    expect(await approved.text()).toContain("Approved");
  });
});

describe("responses without a page of their own cannot become one", () => {
  test("API, JSON, errors and media carry CSP default-src 'none'; sandbox and nosniff, never text/html", async () => {
    const ticket = await h.request("POST", "/v1/media/uploads", {
      token,
      body: { filename: "page.png", content_type: "image/png" },
    });
    expect(ticket.status).toBe(201);
    await fetch(ticket.body.data.upload.signedUrl, {
      method: "PUT",
      headers: { "content-type": "image/png" },
      body: makePng(2, 2),
    });
    const media = (await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token })).body.data;
    const requests: [string, RequestInit?][] = [
      ["/v1/accounts"],
      ["/v1/accounts", { headers: { authorization: `Bearer ${token}` } }],
      ["/v1/posts", { method: "POST", headers: { authorization: `Bearer ${token}` }, body: "not json" }],
      ["/openapi.json"],
      ["/healthz"],
      ["/no/such/route"],
      ["/auth/session"],
      ["/sandbox/bluesky/xrpc/com.atproto.sync.getBlob?did=x&cid=y"],
      [media.public_url.slice(h.url.length)],
      [new URL(ticket.body.data.upload.signedUrl).pathname + new URL(ticket.body.data.upload.signedUrl).search],
    ];
    for (const [path, init] of requests) {
      const res = await fetch(`${h.url}${path}`, { redirect: "manual", ...init });
      expectLockedDown(res, `${init?.method ?? "GET"} ${path} (${res.status})`);
      await res.body?.cancel();
    }
  });

  test("the pages keep their own policy: dashboard, connect pages, the inbox, the API docs", async () => {
    const connect = await h.request("POST", "/v1/accounts/connect/bluesky", { token });
    for (const url of [`${h.url}/`, connect.body.data.hosted_url, `${h.url}/sandbox`, `${h.url}/docs`]) {
      const res = await fetch(url);
      expect({ url, type: res.headers.get("content-type") }).toMatchObject({
        url,
        type: expect.stringContaining("text/html"),
      });
      const csp = res.headers.get("content-security-policy") ?? "";
      expect({ url, csp }).toMatchObject({ url, csp: expect.stringContaining("default-src") });
      expect(csp).not.toBe(SANDBOX_CSP);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      await res.body?.cancel();
    }
  });
});

describe("the emulators take media only", () => {
  test("Bluesky's uploadBlob refuses text/html, and getBlob serves blobs locked down", async () => {
    const row = await sandboxAccount("bluesky");
    const { context } = providerFor(h.ctx, row, { sandbox: true });
    const { accessJwt } = context.credentials as { accessJwt: string };
    const emulator = h.ctx.platforms.emulatorFor("bluesky", profileId)!;
    const upload = (type: string, body: BodyInit) =>
      emulator.handle(
        new Request(`${h.url}/sandbox/bluesky/xrpc/com.atproto.repo.uploadBlob`, {
          method: "POST",
          headers: { authorization: `Bearer ${accessJwt}`, "content-type": type },
          body,
        }),
        "/xrpc/com.atproto.repo.uploadBlob",
      );
    for (const type of [
      "text/html",
      "application/xhtml+xml",
      "image/svg+xml",
      "text/plain",
      "application/javascript",
    ]) {
      const res = await upload(type, "<script>fetch('/auth/session')</script>");
      expect({ type, status: res.status }).toEqual({ type, status: 400 });
    }
    const png = await upload("image/png", makePng(1, 1));
    expect(png.status).toBe(200);
    const { blob } = (await png.json()) as { blob: { ref: { $link: string } } };
    const path = `/xrpc/com.atproto.sync.getBlob?did=${encodeURIComponent(row.remoteId)}&cid=${blob.ref.$link}`;
    const served = await emulator.handle(new Request(`${h.url}/sandbox/bluesky${path}`), path.split("?")[0]);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("content-security-policy")).toBe(SANDBOX_CSP);
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("the emulators pull media through the media guard", () => {
  let inside: ReturnType<typeof Bun.serve>;
  let hits = 0;
  beforeAll(() => {
    inside = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        hits++;
        return new Response(makeJpeg(1, 1, 0), { headers: { "content-type": "image/jpeg" } });
      },
    });
  });
  afterAll(() => inside.stop(true));

  // The plugin side may read loopback here; only the emulator's own pull is under test.
  const pluginMedia = createMediaAccess({ maxBytes: 50 * 1024 * 1024, allowAddress: () => true });

  async function publish(plugin: Plugin, ctx: PluginContext, media: MediaItem[]): Promise<Outcome> {
    let outcome = await plugin.publish!(ctx, {
      content: "pull",
      media,
      options: {},
      idempotencyToken: crypto.randomUUID(),
    });
    for (let i = 0; outcome.kind === "submitted" && i < 50; i++)
      outcome = await plugin.checkStatus!(ctx, outcome.handle);
    return outcome;
  }

  for (const platform of ["instagram", "threads", "tiktok"]) {
    test(`${platform}: an internal address is never fetched; Crier's own media still is`, async () => {
      const row = await sandboxAccount(platform);
      const { plugin, context } = providerFor(h.ctx, row, { sandbox: true, media: pluginMedia });
      const before = hits;
      const internal = await publish(plugin, context, [
        { url: `http://127.0.0.1:${inside.port}/photo.jpg`, type: "image", width: 1, height: 1 },
      ]);
      expect(hits).toBe(before);
      expect(internal.kind).not.toBe("published");

      const ticket = await h.request("POST", "/v1/media/uploads", {
        token,
        body: { filename: "own.jpg", content_type: "image/jpeg" },
      });
      await fetch(ticket.body.data.upload.signedUrl, {
        method: "PUT",
        headers: { "content-type": "image/jpeg" },
        body: makeJpeg(1, 1, 0),
      });
      const own = (await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token })).body.data.public_url;
      expect(own).toStartWith(h.url);
      const outcome = await publish(plugin, context, [{ url: own, type: "image", width: 1, height: 1 }]);
      expect({ platform, kind: outcome.kind }).toEqual({ platform, kind: "published" });
    });
  }
});

describe("sandbox emulator state is per profile", () => {
  test("two sandbox profiles with the same Bluesky handle never see each other's posts", async () => {
    const a = await h.profile({ sandbox: true, name: "a" });
    const b = await h.profile({ sandbox: true, name: "b" });
    const rowA = await sandboxAccount("bluesky", a.token);
    const rowB = await sandboxAccount("bluesky", b.token);
    expect(rowA.username).toBe(rowB.username);
    const { plugin, context: ctxA } = providerFor(h.ctx, rowA, { sandbox: true });
    const published = await plugin.publish!(ctxA, {
      content: "only for profile a",
      media: [],
      options: {},
      idempotencyToken: "a-1",
    });
    expect(published.kind).toBe("published");
    const { context: ctxB } = providerFor(h.ctx, rowB, { sandbox: true });
    const seenByB = await plugin.fetchRecent!(ctxB, null);
    expect(seenByB.map((p) => p.content)).not.toContain("only for profile a");
    const seenByA = await plugin.fetchRecent!(ctxA, null);
    expect(seenByA.map((p) => p.content)).toContain("only for profile a");
    expect(
      h.ctx.platforms
        .emulatorFor("bluesky", b.profileId)!
        .posts()
        .map((p) => p.text),
    ).not.toContain("only for profile a");
  });
});

describe("sandbox state in the database is per profile", () => {
  test("each sandbox profile's emulator state is its own row, holding only its own posts", async () => {
    const cluster = await sandboxCluster();
    try {
      await cluster.start();
      const a = await createProfile(cluster.db, "a", true);
      const b = await createProfile(cluster.db, "b", true);
      const keyA = (await createKey(cluster.db, { name: "k", profileId: a.id, scopes: [...SCOPES] })).token;
      const keyB = (await createKey(cluster.db, { name: "k", profileId: b.id, scopes: [...SCOPES] })).token;
      await connectSandbox(cluster, keyA, "telegram");
      await connectSandbox(cluster, keyB, "telegram");
      const account = (await cluster.request("GET", "/v1/accounts", { token: keyA })).body.data[0].id;
      const created = await cluster.request("POST", "/v1/posts", {
        token: keyA,
        body: { content: "profile a's secret", targets: [{ account_id: account }] },
      });
      expect(created.status).toBe(201);
      await cluster.settle();
      const rows = await cluster.db.rows<{ profile_id: string; state: string }>(
        sql`SELECT profile_id, state FROM sandbox_state WHERE platform = 'telegram'`,
      );
      const byProfile = new Map(rows.map((r) => [r.profile_id, r.state]));
      expect(byProfile.get(a.id)).toContain("profile a's secret");
      expect(byProfile.get(b.id)).toBeDefined();
      expect(byProfile.get(b.id)).not.toContain("profile a's secret");
      const inboxB = await cluster.request("GET", "/v1/sandbox/deliveries", { token: keyB });
      expect(inboxB.body.data).toEqual([]);
    } finally {
      await cluster.stop();
    }
  });
});

describe("the sandbox inbox sign-in link (issue 26 item 7)", () => {
  async function signIn(link: string) {
    const res = await fetch(link, { redirect: "manual" });
    const cookie = res.headers.get("set-cookie");
    return { status: res.status, cookie: cookie?.split(";")[0] ?? null, location: res.headers.get("location") };
  }

  test("the link carries no API key, signs in once, and the cookie is not the key either", async () => {
    const { token: key, keyId } = await h.profile({ sandbox: true, name: "inbox" });
    const link = inboxLink(h.ctx.config, keyId, h.clock.now());
    expect(link).toStartWith(`${h.url}/sandbox?sign_in=`);
    expect(link).not.toContain(key);
    expect(link).not.toContain(encodeURIComponent(key));
    const first = await signIn(link);
    expect(first.status).toBe(303);
    expect(first.location).toBe("/sandbox");
    expect(first.cookie).not.toBeNull();
    expect(first.cookie!).not.toContain(key);
    expect(first.cookie!).not.toContain(encodeURIComponent(key));
    const page = await fetch(`${h.url}/sandbox`, { headers: { cookie: first.cookie! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Sandbox inbox");

    const second = await signIn(link);
    expect(second.status).toBe(401);
    expect(second.cookie).toBeNull();
  });

  test("an expired link is refused", async () => {
    const { keyId } = await h.profile({ sandbox: true, name: "inbox" });
    const link = inboxLink(h.ctx.config, keyId, h.clock.now());
    h.clock.advance(INBOX_LINK_TTL_MS + 1000);
    const res = await signIn(link);
    expect(res.status).toBe(401);
    expect(res.cookie).toBeNull();
  });

  test("a forged link, or a whole API key in the address, signs nobody in", async () => {
    const { token: key, keyId } = await h.profile({ sandbox: true, name: "inbox" });
    const link = inboxLink(h.ctx.config, keyId, h.clock.now());
    const forged = `${link.slice(0, -3)}AAA`;
    for (const url of [forged, `${h.url}/sandbox?key=${encodeURIComponent(key)}`]) {
      const res = await signIn(url);
      expect({ url, status: res.status, cookie: res.cookie }).toEqual({ url, status: 401, cookie: null });
    }
  });

  test("revoking the key ends the inbox session it opened", async () => {
    const { keyId } = await h.profile({ sandbox: true, name: "inbox" });
    const { cookie } = await signIn(inboxLink(h.ctx.config, keyId, h.clock.now()));
    expect((await fetch(`${h.url}/sandbox`, { headers: { cookie: cookie! } })).status).toBe(200);
    await revokeKey(h.db, keyId);
    expect((await fetch(`${h.url}/sandbox`, { headers: { cookie: cookie! } })).status).toBe(401);
  });
});
