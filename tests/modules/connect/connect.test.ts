/**
 * Connect routes over real HTTP: errors of POST /v1/accounts/connect/{platform}, a full OAuth round trip
 * (PKCE, code exchange, identity) against a stand-in provider on loopback, signed state expiry and
 * tampering, reconnect and reactivation, and HTML escaping of the hosted pages.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { keyId } from "../../../src/db/crypto.ts";
import { accounts } from "../../../src/db/schema.ts";
import { PLUGINS } from "../../../plugins/index.ts";
import { createRegistry } from "../../../src/platform/host/registry.ts";
import type { Plugin } from "../../../src/platform/sdk.ts";
import { createHarness } from "../../support/harness.ts";
import { renderSVG } from "uqr";
import { createApp } from "../../../src/app.ts";
import {
  followAuthorization,
  hiddenState,
  listeningHarness,
  submitHostedForm,
  type ListeningHarness,
} from "../../support/connect-kit.ts";

// A stand-in for X's token endpoint and /2/users/me, checking what X checks: client auth, the code,
// redirect_uri and the PKCE verifier against the challenge of the authorization request.
const issued = new Map<string, { challenge: string; redirect: string }>();
let userId = "1001";
let provider: ReturnType<typeof Bun.serve>;
let providerUrl: string;

beforeAll(() => {
  provider = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/authorize") {
        const code = `code-${issued.size + 1}`;
        issued.set(code, {
          challenge: url.searchParams.get("code_challenge") ?? "",
          redirect: url.searchParams.get("redirect_uri") ?? "",
        });
        const back = new URL(url.searchParams.get("redirect_uri")!);
        back.searchParams.set("code", code);
        back.searchParams.set("state", url.searchParams.get("state")!);
        return new Response(null, { status: 302, headers: { location: back.toString() } });
      }
      if (url.pathname === "/2/oauth2/token" && req.method === "POST") {
        if (req.headers.get("authorization") !== `Basic ${Buffer.from("cid:csecret").toString("base64")}`) {
          return Response.json({ error: "unauthorized_client" }, { status: 401 });
        }
        const form = new URLSearchParams(await req.text());
        const grant = issued.get(form.get("code") ?? "");
        if (!grant || grant.redirect !== form.get("redirect_uri"))
          return Response.json(
            { error: "invalid_request", error_description: "Value passed for the authorization code was invalid." },
            { status: 400 },
          );
        const challenge = createHash("sha256")
          .update(form.get("code_verifier") ?? "")
          .digest("base64url");
        if (challenge !== grant.challenge)
          return Response.json(
            { error: "invalid_grant", error_description: "code_verifier mismatch" },
            { status: 400 },
          );
        issued.delete(form.get("code")!);
        return Response.json({
          token_type: "bearer",
          access_token: `at-${userId}`,
          refresh_token: "rt",
          expires_in: 7200,
          scope: "tweet.write",
        });
      }
      if (url.pathname === "/2/users/me") {
        if (!req.headers.get("authorization")?.startsWith("Bearer at-"))
          return Response.json({ title: "Unauthorized" }, { status: 401 });
        const id = req.headers.get("authorization")!.slice("Bearer at-".length);
        return Response.json({
          data: { id, username: `user${id}`, name: "U", profile_image_url: "https://pbs.example/a.png" },
        });
      }
      return new Response("not found", { status: 404 });
    },
  });
  providerUrl = `http://127.0.0.1:${provider.port}`;
});
afterAll(() => provider.stop(true));

describe("POST /v1/accounts/connect/{platform}", () => {
  let h: ListeningHarness;
  beforeAll(async () => {
    h = await listeningHarness();
  });
  afterAll(() => h.stop());

  test("an unknown platform is 404 unsupported_platform", async () => {
    const { token } = await h.profile();
    const res = await h.request("POST", "/v1/accounts/connect/myspace", { token });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("unsupported_platform");
    expect(res.body.error.hint).toContain("bluesky");
  });

  test("an OAuth platform without app credentials is 409 platform_not_configured naming the variables", async () => {
    const { token } = await h.profile();
    const res = await h.request("POST", "/v1/accounts/connect/twitter", { token });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("platform_not_configured");
    expect(res.body.error.hint).toContain("CRIER_TWITTER_CLIENT_ID");
    expect(res.body.error.hint).toContain("CRIER_TWITTER_CLIENT_SECRET");
    const tiktok = await h.request("POST", "/v1/accounts/connect/tiktok", { token });
    expect(tiktok.body.error.hint).toContain("CRIER_TIKTOK_CLIENT_KEY");
  });

  test("a platform whose connect flow is not written yet is 409 connect_not_available", async () => {
    // Every shipped plugin has a connect flow today; a plugin that declares only its mode stands in.
    const { connect: _none, ...withoutConnect } = PLUGINS.reddit;
    const registry = createRegistry({
      ...PLUGINS,
      reddit: { ...withoutConnect, connectionMode: "oauth_authorization_url" } as Plugin,
    });
    const own = await createHarness({}, { platforms: registry });
    try {
      const { token } = await own.profile();
      const res = await own.request("POST", "/v1/accounts/connect/reddit", { token });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("connect_not_available");
    } finally {
      await own.close();
    }
  });

  test("a sandbox profile cannot connect a platform that has no emulator", async () => {
    // A registry without emulators stands in for a platform whose emulator is not written.
    const own = await createHarness({}, { platforms: createRegistry(PLUGINS, {}) });
    try {
      const { token } = await own.profile({ sandbox: true });
      const res = await own.request("POST", "/v1/accounts/connect/bluesky", { token });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("sandbox_unavailable");
    } finally {
      await own.close();
    }
  });

  test("needs accounts:write", async () => {
    const { token } = await h.profile({ scopes: ["accounts:read"] });
    const res = await h.request("POST", "/v1/accounts/connect/bluesky", { token });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("missing_scope");
  });

  test("a hosted flow answers 201 with a hosted_url on this server", async () => {
    const { token } = await h.profile();
    const res = await h.request("POST", "/v1/accounts/connect/bluesky", { token });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ platform: "bluesky", mode: "credential_form_url", authorization_url: null });
    expect(res.body.data.hosted_url).toStartWith(`${h.url}/connect/bluesky?state=`);
  });
});

describe("OAuth round trip", () => {
  let h: ListeningHarness;
  beforeAll(async () => {
    h = await listeningHarness({
      CRIER_TWITTER_CLIENT_ID: "cid",
      CRIER_TWITTER_CLIENT_SECRET: "csecret",
      CRIER_TWITTER_API_URL: providerUrl,
      CRIER_TWITTER_AUTHORIZE_URL: `${providerUrl}/authorize`,
      CRIER_TWITTER_TOKEN_URL: `${providerUrl}/2/oauth2/token`,
    });
  });
  afterAll(() => h.stop());

  async function start(token: string) {
    const res = await h.request("POST", "/v1/accounts/connect/twitter", { token });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ platform: "twitter", mode: "oauth_authorization_url", hosted_url: null });
    return res.body.data.authorization_url as string;
  }

  test("the authorization URL carries client id, redirect, scopes, state and a PKCE challenge", async () => {
    const { token } = await h.profile();
    const url = new URL(await start(token));
    expect(url.searchParams.get("client_id")).toBe("cid");
    expect(url.searchParams.get("redirect_uri")).toBe(`${h.url}/v1/accounts/callback/twitter`);
    expect(url.searchParams.get("scope")).toContain("tweet.write");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("state")).toBeTruthy();
  });

  test("the callback exchanges the code, stores encrypted credentials, and reconnecting restores the same account", async () => {
    const { token, profileId } = await h.profile();
    userId = "1001";
    const page = await followAuthorization(await start(token));
    expect(page.status).toBe(200);
    expect(page.html).toContain("Account connected");
    const list = await h.request("GET", "/v1/accounts", { token });
    expect(list.body.data).toHaveLength(1);
    const account = list.body.data[0];
    expect(account).toMatchObject({
      platform: "twitter",
      username: "user1001",
      status: "active",
      avatar_url: "https://pbs.example/a.png",
    });
    expect(account.capabilities).toMatchObject({
      connection_mode: "oauth_authorization_url",
      text: true,
      threads: true,
    });
    expect(account.media_requirements.max_size_bytes.image).toBe(5 * 1024 * 1024);
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, account.id));
    // Encrypted, and naming the key that made it (SECRET_KEY), so a rotation can find it.
    expect(row.credentials).toStartWith(`v2.${keyId(h.ctx.config.secretKey)}.`);
    expect(row.credentials).not.toContain("at-1001");

    const del = await h.request("DELETE", `/v1/accounts/${account.id}`, { token });
    expect(del.status).toBe(200);
    const again = await followAuthorization(await start(token));
    expect(again.html).toContain("Account connected");
    const after = await h.request("GET", "/v1/accounts", { token });
    expect(after.body.data).toHaveLength(1);
    expect(after.body.data[0]).toMatchObject({ id: account.id, status: "active" });
    const rows = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
    expect(rows).toHaveLength(1);
  });

  test("an expired state shows an error page and connects nothing", async () => {
    const { token } = await h.profile();
    const url = await start(token);
    h.clock.advance(5 * 60_000 + 1_000);
    const page = await followAuthorization(url);
    expect(page.status).toBe(400);
    expect(page.html).toContain("expired");
    expect((await h.request("GET", "/v1/accounts", { token })).body.data).toHaveLength(0);
  });

  test("a tampered state shows an error page and connects nothing", async () => {
    const { token, profileId } = await h.profile();
    const other = await h.profile();
    const url = new URL(await start(token));
    const state = url.searchParams.get("state")!;
    const [payload, mac] = state.split(".");
    // Re-point the payload at another profile while keeping the signature.
    const fields = JSON.parse(Buffer.from(payload, "base64url").toString());
    fields[0] = other.profileId;
    url.searchParams.set("state", `${Buffer.from(JSON.stringify(fields)).toString("base64url")}.${mac}`);
    const page = await followAuthorization(url.toString());
    expect(page.status).toBe(400);
    expect(page.html).toContain("not valid");
    for (const p of [profileId, other.profileId]) {
      expect(await h.db.db.select().from(accounts).where(eq(accounts.profileId, p))).toHaveLength(0);
    }
  });

  test("a state is single-use: a second callback with it is refused, on this copy and on another one", async () => {
    const { token, profileId } = await h.profile();
    userId = "2002";
    const authorization = await start(token);
    const first = await followAuthorization(authorization);
    expect(first.html).toContain("Account connected");
    // The provider happily issues a fresh code for the same state; only Crier can refuse the replay.
    const again = await followAuthorization(authorization);
    expect(again.status).toBe(400);
    expect(again.html).toContain("already been used");

    // Another copy on the same database (a second app, nothing shared in memory) refuses it too.
    const copy = createApp({ ...h.ctx });
    const redirect = await fetch(authorization, { redirect: "manual" });
    const callback = new URL(redirect.headers.get("location")!);
    const replay = await copy.handle(new Request(`http://localhost${callback.pathname}${callback.search}`));
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("already been used");
    expect(await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId))).toHaveLength(1);
  });

  test("a provider that refuses the code shows why on the failure page", async () => {
    const { token } = await h.profile();
    const url = new URL(await start(token));
    const res = await fetch(
      `${h.url}/v1/accounts/callback/twitter?code=bogus&state=${encodeURIComponent(url.searchParams.get("state")!)}`,
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("authorization code was invalid");
  });

  test("a denied authorization shows the provider's reason", async () => {
    const { token } = await h.profile();
    const url = new URL(await start(token));
    const res = await fetch(
      `${h.url}/v1/accounts/callback/twitter?error=access_denied&state=${encodeURIComponent(url.searchParams.get("state")!)}`,
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("access_denied");
  });
});

describe("who is asking, on the hosted pages", () => {
  let h: ListeningHarness;
  beforeAll(async () => {
    h = await listeningHarness({}, { instanceName: "Acme <social>" });
  });
  afterAll(() => h.stop());

  const hostedPage = async (token: string, platform: string) => {
    const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
    const page = await fetch(res.body.data.hosted_url);
    expect(page.status).toBe(200);
    return page.text();
  };

  test("the form names the server (INSTANCE_NAME and PUBLIC_URL's host) and the profile, escaped", async () => {
    const { token } = await h.profile({ sandbox: true, name: "Marketing & <News>" });
    const html = await hostedPage(token, "bluesky");
    const host = new URL(h.url).host;
    expect(html).toContain(`<strong>Acme &lt;social&gt;</strong> (${host})`);
    expect(html).toContain("<strong>Marketing &amp; &lt;News&gt;</strong>");
    expect(html).not.toContain("<News>");
    // The page that confirms the connection says the same.
    const done = await submitHostedForm(
      (await h.request("POST", "/v1/accounts/connect/bluesky", { token })).body.data.hosted_url,
    );
    expect(done.html).toContain("Account connected");
    expect(done.html).toContain("<strong>Marketing &amp; &lt;News&gt;</strong>");
  });

  test("without INSTANCE_NAME the host alone names the server", async () => {
    const bare = await listeningHarness();
    try {
      const { token } = await bare.profile({ sandbox: true, name: "Support" });
      const res = await bare.request("POST", "/v1/accounts/connect/telegram", { token });
      const html = await (await fetch(res.body.data.hosted_url)).text();
      expect(html).toContain(`Requested by the Crier server <strong>${new URL(bare.url).host}</strong>`);
      expect(html).toContain("<strong>Support</strong>");
    } finally {
      await bare.stop();
    }
  });

  test("Farcaster's approval link is also a QR code drawn on the page, loading nothing from elsewhere", async () => {
    const { token } = await h.profile({ sandbox: true });
    const html = await hostedPage(token, "farcaster");
    const link = /<a href="([^"]*)" target="_blank"/.exec(html)![1].replace(/&amp;/g, "&");
    expect(link).toStartWith("http");
    const figure = /<figure class="qr"[^>]*>([\s\S]*?)<\/figure>/.exec(html);
    expect(figure).not.toBeNull();
    // The code is the link's own: the same SVG the QR encoder draws for it.
    expect(figure![1]).toContain(renderSVG(link, { pixelSize: 4 }));
    expect(html).not.toMatch(/<img\b|<script\b|\bsrc=/);
  });

  test("a page without an approval link has no QR code", async () => {
    const { token } = await h.profile({ sandbox: true });
    expect(await hostedPage(token, "bluesky")).not.toContain('class="qr"');
  });
});

describe("hosted pages", () => {
  let h: ListeningHarness;
  beforeAll(async () => {
    h = await listeningHarness();
  });
  afterAll(() => h.stop());

  test("what the user typed is escaped when the form is shown again", async () => {
    const { token, profileId } = await h.profile({ sandbox: true });
    // An account with a known password, so a wrong one fails and the form comes back.
    (
      h.ctx.platforms.emulatorFor("bluesky", profileId) as unknown as {
        registerAccount(a: { handle: string; password: string }): string;
      }
    ).registerAccount({ handle: "x.bsky.social", password: "right" });
    const res = await h.request("POST", "/v1/accounts/connect/bluesky", { token });
    const page = await submitHostedForm(res.body.data.hosted_url, {
      handle: 'x.bsky.social"><script>alert(1)</script>',
      app_password: "wrong",
    });
    expect(page.status).toBe(400);
    expect(page.html).not.toContain("<script>");
    expect(page.html).toContain("&lt;script&gt;");
  });

  test("a hosted link connects once: opened again after it connected, it is refused", async () => {
    const { token, profileId } = await h.profile({ sandbox: true });
    const res = await h.request("POST", "/v1/accounts/connect/bluesky", { token });
    const hostedUrl = res.body.data.hosted_url as string;
    const page = await fetch(hostedUrl);
    const html = await page.text();
    const first = await submitHostedForm(hostedUrl, { handle: "once.bsky.social" });
    expect(first.html).toContain("Account connected");
    const again = await submitHostedForm(hostedUrl, { handle: "twice.bsky.social" });
    expect(again.status).toBe(400);
    expect(again.html).toContain("already been used");
    // A form kept open in another tab and submitted late is refused as well.
    const form = new URLSearchParams({ state: hiddenState(html), handle: "late.bsky.social", app_password: "x" });
    const late = await fetch(`${h.url}/connect/bluesky`, { method: "POST", body: form });
    expect(late.status).toBe(400);
    expect(await late.text()).toContain("already been used");
    const rows = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
    expect(rows.map((r) => r.username)).toEqual(["once.bsky.social"]);
  });

  test("a hosted page with a bad state connects nothing", async () => {
    const res = await fetch(`${h.url}/connect/bluesky?state=forged.value`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("not valid");
  });

  test("an expired hosted page refuses the submission", async () => {
    const { token } = await h.profile({ sandbox: true });
    const res = await h.request("POST", "/v1/accounts/connect/bluesky", { token });
    h.clock.advance(5 * 60_000 + 1_000);
    const page = await submitHostedForm(res.body.data.hosted_url);
    expect(page.status).toBe(400);
    expect(page.html).toContain("expired");
    expect((await h.request("GET", "/v1/accounts", { token })).body.data).toHaveLength(0);
  });

  test("the sandbox authorize page only redirects to Crier's own callback", async () => {
    const res = await fetch(
      `${h.url}/sandbox/bluesky/oauth/authorize?redirect_uri=${encodeURIComponent("https://evil.example/cb")}&state=x`,
      { redirect: "manual" },
    );
    expect(res.status).toBe(400);
  });
});
