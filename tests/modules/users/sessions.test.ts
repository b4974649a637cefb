/**
 * The dashboard's session path without a browser: one-time links, sign-in, the session cookie calling /v1
 * (CSRF token and Origin), sign-out everywhere, profile switching and the sign-in rate limits.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminCommands } from "../../../src/cli/commands.ts";
import { serveApp } from "../../../src/http/serve.ts";
import { createKey, createProfile } from "../../../src/modules/keys/service.ts";
import { MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_USER } from "../../../src/modules/users/throttle.ts";
import { LINK_TTL_MS, SESSION_TTL_MS } from "../../../src/modules/users/service.ts";
import { createHarness, type Harness } from "../../support/harness.ts";

const PASSWORD = "correct horse battery staple";

let h: Harness;
/** A key on the first user's profile, to look at that profile independently of any session. */
let keyA = "";
let profileA = "";
let profileB = "";

beforeAll(async () => {
  h = await createHarness();
  profileA = (await createProfile(h.db, "Acme", false)).id;
  // Sign-in opens the member's earliest profile. Times are kept to the millisecond, and two profiles made
  // in the same one tie (their random ids decide), so B is made once the clock has moved on.
  await Bun.sleep(2);
  profileB = (await createProfile(h.db, "Side project", true)).id;
  keyA = (await createKey(h.db, { name: "check", profileId: profileA, scopes: ["posts:read", "posts:write"] })).token;
});
afterAll(() => h.close());

/** `crier users create`: the token of the one-time link it prints. */
async function newUser(email: string, profileId = profileA) {
  const created = await adminCommands["users.create"](h.ctx, { email, profileId });
  return created.link.split("#")[1];
}

function cookieOf(res: { headers: Headers }): string {
  const set = res.headers.get("set-cookie") ?? "";
  return /crier_session=([^;]*)/.exec(set)?.[1] ?? "";
}

/** Signs in and returns what the page holds: the cookie (as the browser would send it) and the CSRF token. */
async function signIn(email: string, password = PASSWORD) {
  const res = await h.request("POST", "/auth/sign-in", { body: { email, password } });
  expect(res.status).toBe(200);
  return { cookie: `crier_session=${cookieOf(res)}`, csrf: res.body.data.csrf_token as string, body: res.body };
}

const withSession = (s: { cookie: string; csrf?: string }, extra: Record<string, string> = {}) => ({
  cookie: s.cookie,
  ...(s.csrf ? { "x-csrf-token": s.csrf } : {}),
  ...extra,
});

const draftsOfA = async () => (await h.request("GET", "/v1/drafts", { token: keyA })).body.data as unknown[];

describe("one-time sign-in link", () => {
  test("names the user, refuses a short password without using the link, then works once", async () => {
    const token = await newUser("ada@example.com");
    const seen = await h.request("POST", "/auth/links/lookup", { body: { token } });
    expect(seen.status).toBe(200);
    expect(seen.body.data.email).toBe("ada@example.com");

    const weak = await h.request("POST", "/auth/links/redeem", { body: { token, password: "short" } });
    expect(weak.status).toBe(400);
    expect(weak.body.error.code).toBe("weak_password");
    expect(weak.body.error.hint).toBeString();

    const set = await h.request("POST", "/auth/links/redeem", { body: { token, password: PASSWORD } });
    expect(set.status).toBe(200);
    expect(set.body.data.user.email).toBe("ada@example.com");
    const cookie = set.headers.get("set-cookie")!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).not.toContain("Secure");

    for (const [path, body] of [
      ["/auth/links/lookup", { token }],
      ["/auth/links/redeem", { token, password: "another long password" }],
    ] as const) {
      const again = await h.request("POST", path, { body });
      expect(again.status).toBe(400);
      expect(again.body.error.code).toBe("link_invalid");
    }
    // The second attempt changed nothing: the password set through the link still signs in.
    await signIn("ada@example.com");
  });

  test("expires after 24 hours; reset-password gives a new one and the new password replaces the old", async () => {
    const token = await newUser("bob@example.com");
    h.clock.advance(LINK_TTL_MS + 1000);
    const late = await h.request("POST", "/auth/links/redeem", { body: { token, password: PASSWORD } });
    expect(late.status).toBe(400);
    expect(late.body.error.code).toBe("link_invalid");
    expect(
      (await h.request("POST", "/auth/sign-in", { body: { email: "bob@example.com", password: PASSWORD } })).status,
    ).toBe(401);

    const reset = await adminCommands["users.reset-password"](h.ctx, { email: "bob@example.com" });
    const fresh = reset.link.split("#")[1];
    expect((await h.request("POST", "/auth/links/redeem", { body: { token: fresh, password: PASSWORD } })).status).toBe(
      200,
    );
    const old = await signIn("bob@example.com");

    // A second reset: the new password works, the old one no longer does, and old sessions end.
    const second = (await adminCommands["users.reset-password"](h.ctx, { email: "bob@example.com" })).link.split(
      "#",
    )[1];
    expect(
      (await h.request("POST", "/auth/links/redeem", { body: { token: second, password: "a new long passphrase" } }))
        .status,
    ).toBe(200);
    expect((await h.request("GET", "/auth/session", { headers: { cookie: old.cookie } })).status).toBe(401);
    await signIn("bob@example.com", "a new long passphrase");
  });
});

describe("sign-in", () => {
  test("a wrong password and an unknown email get the same 401 and no cookie", async () => {
    const wrong = await h.request("POST", "/auth/sign-in", {
      body: { email: "ada@example.com", password: "nope nope nope" },
    });
    const unknown = await h.request("POST", "/auth/sign-in", {
      body: { email: "who@example.com", password: PASSWORD },
    });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("sign_in_failed");
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    expect(unknown.body.error.message).toBe(wrong.body.error.message);
  });

  test("the right password opens a session; the address is matched whatever its case", async () => {
    const s = await signIn("ADA@Example.com");
    expect(s.body.data.user.email).toBe("ada@example.com");
    expect(s.body.data.profile.id).toBe(profileA);
    expect(s.csrf.length).toBeGreaterThan(20);
    const session = await h.request("GET", "/auth/session", { headers: { cookie: s.cookie } });
    expect(session.status).toBe(200);
    expect(session.body.data.csrf_token).toBe(s.csrf);
  });

  test("the cookie is Secure when PUBLIC_URL is https", async () => {
    const secure = await createHarness({ publicUrl: "https://crier.example" });
    try {
      const p = await createProfile(secure.db, "p", false);
      const link = (await adminCommands["users.create"](secure.ctx, { email: "s@example.com", profileId: p.id })).link;
      expect(link).toStartWith("https://crier.example/welcome#");
      const res = await secure.request("POST", "/auth/links/redeem", {
        body: { token: link.split("#")[1], password: PASSWORD },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("set-cookie")).toContain("; Secure");
    } finally {
      await secure.close();
    }
  });
});

describe("a session calling /v1", () => {
  test("with its CSRF token it acts on its profile; without it, or from another site, nothing changes", async () => {
    const s = await signIn("ada@example.com");
    const before = (await draftsOfA()).length;

    const noToken = await h.request("POST", "/v1/drafts", {
      headers: withSession({ cookie: s.cookie }),
      body: { content: "x" },
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.error.code).toBe("csrf_refused");
    expect(noToken.body.error.hint).toContain("X-CSRF-Token");

    const wrongToken = await h.request("POST", "/v1/drafts", {
      headers: withSession({ cookie: s.cookie, csrf: "not-the-token" }),
      body: { content: "x" },
    });
    expect(wrongToken.status).toBe(403);

    const foreign = await h.request("POST", "/v1/drafts", {
      headers: withSession(s, { origin: "https://evil.example" }),
      body: { content: "x" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe("csrf_refused");
    // Reads need the token too: the cookie alone is not enough to read the profile's data.
    expect((await h.request("GET", "/v1/drafts", { headers: withSession({ cookie: s.cookie }) })).status).toBe(403);
    expect(await draftsOfA()).toHaveLength(before);

    const ok = await h.request("POST", "/v1/drafts", {
      headers: withSession(s, { origin: "http://localhost" }),
      body: { content: "from the dashboard" },
    });
    expect(ok.status).toBe(201);
    expect(await draftsOfA()).toHaveLength(before + 1);
    // Every scope on its profile: accounts and webhooks answer too.
    expect((await h.request("GET", "/v1/accounts", { headers: withSession(s) })).status).toBe(200);
    expect((await h.request("GET", "/v1/webhooks", { headers: withSession(s) })).status).toBe(200);
  });

  test("an unknown or expired cookie is 401 not_signed_in, never the profile's data", async () => {
    const forged = await h.request("GET", "/v1/drafts", {
      headers: { cookie: "crier_session=forged", "x-csrf-token": "x" },
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("not_signed_in");

    const s = await signIn("ada@example.com");
    h.clock.advance(SESSION_TTL_MS + 1000);
    const expired = await h.request("GET", "/v1/drafts", { headers: withSession(s) });
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("not_signed_in");
  });
});

describe("sign-out", () => {
  test("signs out this session only, or everywhere", async () => {
    const [one, two, three] = [
      await signIn("ada@example.com"),
      await signIn("ada@example.com"),
      await signIn("ada@example.com"),
    ];
    const out = await h.request("POST", "/auth/sign-out", { headers: withSession(one), body: {} });
    expect(out.status).toBe(200);
    expect(cookieOf(out)).toBe("");
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await h.request("GET", "/auth/session", { headers: { cookie: one.cookie } })).status).toBe(401);
    expect((await h.request("GET", "/auth/session", { headers: { cookie: two.cookie } })).status).toBe(200);

    // Signing out needs the CSRF token like any other change: another site cannot sign the user out.
    expect(
      (await h.request("POST", "/auth/sign-out", { headers: { cookie: two.cookie }, body: { everywhere: true } }))
        .status,
    ).toBe(403);
    const all = await h.request("POST", "/auth/sign-out", { headers: withSession(two), body: { everywhere: true } });
    expect(all.status).toBe(200);
    expect(all.body.data.everywhere).toBe(true);
    for (const s of [two, three]) {
      expect((await h.request("GET", "/auth/session", { headers: { cookie: s.cookie } })).status).toBe(401);
      expect((await h.request("GET", "/v1/drafts", { headers: withSession(s) })).status).toBe(401);
    }
  });
});

describe("profiles", () => {
  test("a user in two profiles switches between them; /v1 then sees the other profile's data only", async () => {
    await adminCommands["users.create"](h.ctx, { email: "ada@example.com", profileId: profileB });
    const s = await signIn("ada@example.com");
    expect(s.body.data.profiles.map((p: { id: string }) => p.id).sort()).toEqual([profileA, profileB].sort());
    expect(s.body.data.profile.id).toBe(profileA);
    const inA = (await h.request("GET", "/v1/drafts", { headers: withSession(s) })).body.data.length;
    expect(inA).toBeGreaterThan(0);

    // Switching changes something: the CSRF token is required.
    expect(
      (await h.request("POST", "/auth/profile", { headers: { cookie: s.cookie }, body: { profile_id: profileB } }))
        .status,
    ).toBe(403);
    const switched = await h.request("POST", "/auth/profile", {
      headers: withSession(s),
      body: { profile_id: profileB },
    });
    expect(switched.status).toBe(200);
    expect(switched.body.data.profile).toMatchObject({ id: profileB, sandbox: true });
    expect((await h.request("GET", "/v1/drafts", { headers: withSession(s) })).body.data).toHaveLength(0);
    const made = await h.request("POST", "/v1/drafts", { headers: withSession(s), body: { content: "in B" } });
    expect(made.status).toBe(201);
    expect((await draftsOfA()).some((d: any) => d.id === made.body.data.id)).toBe(false);

    // A profile the user is not in (even one that exists) is 404, and the session stays where it was.
    const stranger = (await createProfile(h.db, "Someone else", false)).id;
    const refused = await h.request("POST", "/auth/profile", {
      headers: withSession(s),
      body: { profile_id: stranger },
    });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe("not_found");
    expect((await h.request("GET", "/auth/session", { headers: { cookie: s.cookie } })).body.data.profile.id).toBe(
      profileB,
    );
  });
});

describe("sign-in rate limits", () => {
  test(`per user: after ${MAX_FAILURES_PER_USER} wrong passwords even the right one waits; others from the same address do not`, async () => {
    await h.request("POST", "/auth/links/redeem", {
      body: { token: await newUser("cat@example.com"), password: PASSWORD },
    });
    await h.request("POST", "/auth/links/redeem", {
      body: { token: await newUser("dan@example.com"), password: PASSWORD },
    });
    for (let i = 0; i < MAX_FAILURES_PER_USER; i++) {
      const res = await h.request("POST", "/auth/sign-in", {
        body: { email: "cat@example.com", password: `wrong ${i}` },
      });
      expect(res.status).toBe(401);
    }
    const limited = await h.request("POST", "/auth/sign-in", {
      body: { email: "Cat@example.com", password: PASSWORD },
    });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("set-cookie")).toBeNull();

    await signIn("dan@example.com");
    h.clock.advance(Number(limited.headers.get("retry-after")) * 1000);
    await signIn("cat@example.com");
  });

  test(`per address, over real HTTP: after ${MAX_FAILURES_PER_ADDRESS} failures on any addresses, every sign-in from it waits`, async () => {
    await h.request("POST", "/auth/links/redeem", {
      body: { token: await newUser("eve@example.com"), password: PASSWORD },
    });
    const server = serveApp(h.app, { hostname: "127.0.0.1", port: 0, config: h.ctx.config, log: h.ctx.log });
    const url = `http://127.0.0.1:${server.port}/auth/sign-in`;
    const post = (email: string, password: string) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password }),
      });
    try {
      expect((await post("eve@example.com", PASSWORD)).status).toBe(200);
      // One guess each at many users, each under the per-user limit.
      for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++)
        expect((await post(`user${i}@example.com`, "guess guess")).status).toBe(401);
      const limited = await post("eve@example.com", PASSWORD);
      expect(limited.status).toBe(429);
      expect(((await limited.json()) as any).error.code).toBe("rate_limited");
      // The same user from another address (here: in-process, no network address) is not held back.
      await signIn("eve@example.com");
    } finally {
      await server.stop(true);
    }
  });
});
