/**
 * Every OAuth plugin's connect flow end to end over real HTTP against a stand-in provider on loopback
 * that answers the way each platform documents: the token endpoint (client auth as the platform wants
 * it), long-lived token exchanges, and the identity call. Checks the account each flow produces.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../../src/db/schema.ts";
import { decryptJson } from "../../../src/db/crypto.ts";
import { createRegistry } from "../../../src/platform/host/registry.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../../support/connect-kit.ts";

type Reply = (req: Request, url: URL, body: URLSearchParams) => unknown;

const basic = (req: Request) =>
  req.headers.get("authorization") === `Basic ${Buffer.from("cid:csecret").toString("base64")}`;
const inBody = (body: URLSearchParams, idParam = "client_id") =>
  body.get(idParam) === "cid" && body.get("client_secret") === "csecret";
const bearer = (req: Request, token: string) => req.headers.get("authorization") === `Bearer ${token}`;
const redditAgent = (req: Request) =>
  /^server:cid:crier-[\d.]+ \(by \/u\/app_developer\)$/.test(req.headers.get("user-agent") ?? "");
const token = { access_token: "at", refresh_token: "rt", expires_in: 3600, token_type: "bearer" };

// Per platform: the routes of its stand-in, and the account the flow must produce.
const PROVIDERS: Record<string, { routes: Record<string, Reply>; expect: { remoteId: string; username: string } }> = {
  twitter: {
    routes: {
      "POST /token": (req, _u, b) => (basic(req) && b.get("code_verifier") ? token : null),
      "GET /2/users/me": (req) => (bearer(req, "at") ? { data: { id: "42", username: "xuser" } } : null),
    },
    expect: { remoteId: "42", username: "xuser" },
  },
  facebook: {
    routes: {
      "GET /token": (_r, u) =>
        u.searchParams.get("client_secret") === "csecret" && u.searchParams.get("code")
          ? { access_token: "short" }
          : null,
      "GET /v24.0/oauth/access_token": (_r, u) =>
        u.searchParams.get("fb_exchange_token") === "short" ? { access_token: "long", expires_in: 5184000 } : null,
      "GET /v24.0/me/accounts": (_r, u) =>
        u.searchParams.get("access_token") === "long"
          ? { data: [{ id: "page1", name: "My Page", access_token: "pagetok" }] }
          : null,
    },
    expect: { remoteId: "page1", username: "My Page" },
  },
  instagram: {
    routes: {
      "POST /token": (_r, _u, b) => (inBody(b) ? { access_token: "short", user_id: 17 } : null),
      "GET /access_token": (_r, u) =>
        u.searchParams.get("grant_type") === "ig_exchange_token" && u.searchParams.get("access_token") === "short"
          ? { access_token: "long", expires_in: 5184000 }
          : null,
      "GET /me": (_r, u) =>
        u.searchParams.get("access_token") === "long" ? { user_id: "1784", id: "x", username: "insta" } : null,
    },
    expect: { remoteId: "1784", username: "insta" },
  },
  threads: {
    routes: {
      "POST /token": (_r, _u, b) => (inBody(b) ? { access_token: "short", user_id: 5 } : null),
      "GET /access_token": (_r, u) =>
        u.searchParams.get("grant_type") === "th_exchange_token" ? { access_token: "long", expires_in: 5184000 } : null,
      "GET /v1.0/me": (_r, u) =>
        u.searchParams.get("access_token") === "long" ? { id: "t5", username: "threader" } : null,
    },
    expect: { remoteId: "t5", username: "threader" },
  },
  linkedin: {
    routes: {
      "POST /token": (_r, _u, b) => (inBody(b) ? token : null),
      "GET /v2/userinfo": (req) => (bearer(req, "at") ? { sub: "li-9", name: "Ada L" } : null),
    },
    expect: { remoteId: "li-9", username: "Ada L" },
  },
  pinterest: {
    routes: {
      "POST /token": (req) => (basic(req) ? token : null),
      "GET /user_account": (req) => (bearer(req, "at") ? { id: "pin1", username: "pinner" } : null),
    },
    expect: { remoteId: "pin1", username: "pinner" },
  },
  reddit: {
    routes: {
      // Reddit's rules: `<platform>:<app ID>:<version> (by /u/<username>)` on every call, token endpoint included.
      "POST /token": (req) => (basic(req) && redditAgent(req) ? token : null),
      "GET /api/v1/me": (req) => (bearer(req, "at") && redditAgent(req) ? { id: "r1", name: "redditor" } : null),
    },
    expect: { remoteId: "r1", username: "redditor" },
  },
  snapchat: {
    routes: {
      "POST /token": (_r, _u, b) => (inBody(b) ? token : null),
      "GET /v1/public_profiles/my_profile": (req) =>
        bearer(req, "at") ? { public_profile: { id: "snap1", snap_user_name: "snapper" } } : null,
    },
    expect: { remoteId: "snap1", username: "snapper" },
  },
  tiktok: {
    routes: {
      "POST /token": (_r, _u, b) => (inBody(b, "client_key") ? { ...token, open_id: "oid" } : null),
      "GET /v2/user/info/": (req) =>
        bearer(req, "at") ? { data: { user: { open_id: "oid", username: "tiktoker" } } } : null,
    },
    expect: { remoteId: "oid", username: "tiktoker" },
  },
  vimeo: {
    routes: {
      "POST /token": (req) =>
        basic(req)
          ? { access_token: "at", token_type: "bearer", user: { uri: "/users/777", name: "Vimeo Person" } }
          : null,
    },
    expect: { remoteId: "777", username: "Vimeo Person" },
  },
  youtube: {
    routes: {
      "POST /token": (_r, _u, b) => (inBody(b) && b.get("code_verifier") ? token : null),
      "GET /youtube/v3/channels": (req, u) =>
        bearer(req, "at") && u.searchParams.get("mine") === "true"
          ? { items: [{ id: "UC1", snippet: { title: "Chan", customUrl: "@chan" } }] }
          : null,
    },
    expect: { remoteId: "UC1", username: "@chan" },
  },
  google_business: {
    routes: {
      // Google's token endpoint (as YouTube's), the answer naming the scope granted.
      "POST /token": (_r, _u, b) =>
        inBody(b) && b.get("code_verifier")
          ? { ...token, scope: "https://www.googleapis.com/auth/business.manage" }
          : null,
      "GET /v1/accounts": (req) =>
        bearer(req, "at") ? { accounts: [{ name: "accounts/7", accountName: "Bakery group" }] } : null,
      "GET /v1/accounts/7/locations": (req, u) =>
        bearer(req, "at") && u.searchParams.get("readMask")
          ? { locations: [{ name: "locations/9", title: "Corner Bakery", metadata: { canOperateLocalPost: true } }] }
          : null,
    },
    expect: { remoteId: "accounts/7/locations/9", username: "Corner Bakery" },
  },
  slack: {
    routes: {
      // oauth.v2.access: the client by HTTP Basic; the channel picked on the consent screen comes back.
      "POST /token": (req, _u, b) =>
        basic(req) && b.get("code")
          ? {
              ok: true,
              access_token: "at",
              scope: "chat:write,files:write,incoming-webhook",
              incoming_webhook: { channel_id: "C1", channel: "#news" },
            }
          : null,
      "POST /api/auth.test": (req) =>
        bearer(req, "at")
          ? { ok: true, team_id: "T1", team: "Acme", url: "https://acme.slack.com/", user_id: "U1" }
          : null,
      "POST /api/conversations.info": (req, _u, b) =>
        bearer(req, "at") && b.get("channel") === "C1"
          ? { ok: true, channel: { id: "C1", name: "news", is_member: true } }
          : null,
    },
    expect: { remoteId: "T1:C1", username: "#news" },
  },
};

const oauthPlatforms = createRegistry()
  .list()
  // Flows that ask something first (Mastodon's server) are tested with their own plugin's tests.
  .filter((p) => p.connect?.mode === "oauth_authorization_url" && !p.connect.ask)
  .map((p) => p.platform as string);

let provider: ReturnType<typeof Bun.serve>;
let base: string;
let h: ListeningHarness;

beforeAll(async () => {
  provider = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const [, platform, ...rest] = url.pathname.split("/");
      const path = `/${rest.join("/")}`;
      if (path === "/authorize") {
        const back = new URL(url.searchParams.get("redirect_uri")!);
        back.searchParams.set("code", "the-code");
        back.searchParams.set("state", url.searchParams.get("state")!);
        return new Response(null, { status: 302, headers: { location: back.toString() } });
      }
      const reply = PROVIDERS[platform]?.routes[`${req.method} ${path}`];
      const body = new URLSearchParams(req.method === "POST" ? await req.text() : "");
      const answer = reply?.(req, url, body);
      return answer
        ? Response.json(answer)
        : Response.json({ error: "invalid_request", message: `refused ${req.method} ${path}` }, { status: 400 });
    },
  });
  base = `http://127.0.0.1:${provider.port}`;
  const env: Record<string, string> = {};
  for (const p of oauthPlatforms) {
    const prefix = `CRIER_${p.toUpperCase()}_`;
    Object.assign(env, {
      [`${prefix}API_URL`]: `${base}/${p}`,
      [`${prefix}AUTHORIZE_URL`]: `${base}/${p}/authorize`,
      [`${prefix}TOKEN_URL`]: `${base}/${p}/token`,
      [`${prefix}CLIENT_ID`]: "cid",
      [`${prefix}CLIENT_KEY`]: "cid",
      [`${prefix}CLIENT_SECRET`]: "csecret",
      [`${prefix}USERNAME`]: "app_developer",
    });
  }
  h = await listeningHarness(env);
});
afterAll(async () => {
  await h.stop();
  provider.stop(true);
});

test("every OAuth plugin has a stand-in here", () => {
  expect(oauthPlatforms.sort()).toEqual(Object.keys(PROVIDERS).sort());
});

test.each(Object.keys(PROVIDERS))("%s connects end to end and stores the account", async (platform) => {
  const { token: key, profileId } = await h.profile();
  const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token: key });
  expect(res.status).toBe(201);
  const page = await followAuthorization(res.body.data.authorization_url);
  expect(page.html).toContain("Account connected");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  expect({ remoteId: row.remoteId, username: row.username }).toEqual(PROVIDERS[platform].expect);
  const creds = decryptJson<Record<string, unknown>>(h.ctx.config.secretKey, row.credentials!);
  expect(typeof creds.access_token).toBe("string");
});
