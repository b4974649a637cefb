/**
 * Security issue 26, item 4: the sign-in throttle under a burst, the bound on concurrent password checks,
 * TRUSTED_PROXIES, and per-account counting that cannot keep the real user out for long. Over real HTTP,
 * so the throttle sees the address the listening server records.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminCommands } from "../../src/cli/commands.ts";
import { loadConfig } from "../../src/config.ts";
import { serveApp } from "../../src/http/serve.ts";
import { createProfile } from "../../src/modules/keys/service.ts";
import {
  ACCOUNT_REFILL_MS,
  MAX_FAILURES_PER_ADDRESS,
  MAX_FAILURES_PER_USER,
} from "../../src/modules/users/throttle.ts";
import { passwordWork, PASSWORD_CHECKS_AT_ONCE } from "../../src/modules/users/password-work.ts";
import { createHarness, type Harness } from "../support/harness.ts";

const PASSWORD = "correct horse battery staple";

let h: Harness;
let profileId = "";
let server: ReturnType<typeof serveApp>;
let base = "";

beforeAll(async () => {
  h = await createHarness({ trustedProxies: ["127.0.0.1"] });
  profileId = (await createProfile(h.db, "Acme", false)).id;
  server = serveApp(h.app, { hostname: "127.0.0.1", port: 0, config: h.ctx.config, log: h.ctx.log });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.stop(true);
  await h.close();
});

/** `crier users create` and the password set through its link. */
async function newUser(email: string) {
  const token = (await adminCommands["users.create"](h.ctx, { email, profileId })).link.split("#")[1];
  const res = await h.request("POST", "/auth/links/redeem", { body: { token, password: PASSWORD } });
  expect(res.status).toBe(200);
}

let nextAddress = 1;
/** A client address of its own (documentation range), as a trusted proxy would name it. */
const freshAddress = () => `198.51.100.${nextAddress++}`;

function signIn(email: string, password: string, opts: { from?: string; cookie?: string; url?: string } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.from) headers["x-forwarded-for"] = opts.from;
  if (opts.cookie) headers.cookie = opts.cookie;
  return fetch(`${opts.url ?? base}/auth/sign-in`, {
    method: "POST",
    headers,
    body: JSON.stringify({ email, password }),
  });
}

function statuses(responses: Response[]) {
  const count: Record<number, number> = {};
  for (const r of responses) count[r.status] = (count[r.status] ?? 0) + 1;
  return count;
}

describe("a burst of guesses", () => {
  test(`60 parallel wrong passwords for one user: ${MAX_FAILURES_PER_USER} are checked, the rest are 429 at once`, async () => {
    await newUser("burst@example.com");
    const from = freshAddress();
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => signIn("burst@example.com", `wrong guess ${i}`, { from })),
    );
    expect(statuses(responses)).toEqual({ 401: MAX_FAILURES_PER_USER, 429: 60 - MAX_FAILURES_PER_USER });
    const limited = responses.find((r) => r.status === 429)!;
    expect(((await limited.json()) as any).error.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test(`60 parallel sign-ins from as many addresses: at most ${PASSWORD_CHECKS_AT_ONCE} password checks run at once`, async () => {
    passwordWork.resetPeak();
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => signIn(`nobody${i}@example.com`, "some guess", { from: freshAddress() })),
    );
    // Each one is a different user and address, so the throttle holds none back; the checks queue instead.
    expect(statuses(responses)[401]).toBeGreaterThan(PASSWORD_CHECKS_AT_ONCE);
    expect(passwordWork.peak).toBeGreaterThan(0);
    expect(passwordWork.peak).toBeLessThanOrEqual(PASSWORD_CHECKS_AT_ONCE);
  }, 180_000);

  test("a correct password gives its reserved attempt back", async () => {
    await newUser("often@example.com");
    const from = freshAddress();
    for (let i = 0; i < MAX_FAILURES_PER_USER + 3; i++)
      expect((await signIn("often@example.com", PASSWORD, { from })).status).toBe(200);
  });
});

describe("per account, across addresses", () => {
  test("guesses from many addresses lock the account, but only for a short while", async () => {
    await newUser("target@example.com");
    for (let i = 0; i < MAX_FAILURES_PER_USER; i++)
      expect((await signIn("target@example.com", `guess ${i}`, { from: freshAddress() })).status).toBe(401);
    // A further guess from yet another address is refused: the account, not the address, is counted.
    const locked = await signIn("target@example.com", "one more guess", { from: freshAddress() });
    expect(locked.status).toBe(429);
    const wait = Number(locked.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait * 1000).toBeLessThanOrEqual(ACCOUNT_REFILL_MS);
    // After the short wait, the user (on a browser never used before) gets in with the right password.
    h.clock.advance(wait * 1000);
    expect((await signIn("target@example.com", PASSWORD, { from: freshAddress() })).status).toBe(200);
  });

  test("a browser the user signed in from before is not locked out by someone else's guesses", async () => {
    await newUser("known@example.com");
    const first = await signIn("known@example.com", PASSWORD, { from: freshAddress() });
    expect(first.status).toBe(200);
    const device = /crier_device=[^;]+/.exec(first.headers.getSetCookie().join("\n"))?.[0];
    expect(device).toBeDefined();
    // Someone else uses up the account's attempts from many addresses...
    for (let i = 0; i < MAX_FAILURES_PER_USER + 2; i++)
      await signIn("known@example.com", `guess ${i}`, { from: freshAddress() });
    expect((await signIn("known@example.com", PASSWORD, { from: freshAddress() })).status).toBe(429);
    // ...while the user's own browser still signs in at once.
    expect((await signIn("known@example.com", PASSWORD, { from: freshAddress(), cookie: device })).status).toBe(200);
    // The device cookie is bound to its user: it does not lift another account's lock.
    await newUser("other@example.com");
    for (let i = 0; i < MAX_FAILURES_PER_USER; i++)
      await signIn("other@example.com", `guess ${i}`, { from: freshAddress() });
    expect((await signIn("other@example.com", PASSWORD, { from: freshAddress(), cookie: device })).status).toBe(429);
    // A forged device cookie is ignored.
    expect(
      (await signIn("other@example.com", PASSWORD, { from: freshAddress(), cookie: "crier_device=abc.def" })).status,
    ).toBe(429);
  });
});

describe("TRUSTED_PROXIES", () => {
  test("parses addresses and ranges, and refuses what is neither", () => {
    const env = { DATA_DIR: join(tmpdir(), "crier-unused"), SECRET_KEY: "x".repeat(32) };
    expect(loadConfig({ ...env, TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1 ::1" }).trustedProxies).toEqual([
      "10.0.0.0/8",
      "127.0.0.1",
      "::1",
    ]);
    expect(loadConfig(env).trustedProxies).toEqual([]);
    expect(() => loadConfig({ ...env, TRUSTED_PROXIES: "proxy.example" })).toThrow(/TRUSTED_PROXIES/);
    expect(() => loadConfig({ ...env, TRUSTED_PROXIES: "10.0.0.0/40" })).toThrow(/TRUSTED_PROXIES/);
  });

  test("X-Forwarded-For names the client only when the peer is a listed proxy", async () => {
    // Here the peer (127.0.0.1) is trusted: each forwarded address has its own count.
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS + 1; i++)
      expect((await signIn(`spray${i}@example.com`, "guess", { from: freshAddress() })).status).toBe(401);
    // One forwarded address is still limited on its own.
    const from = freshAddress();
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) await signIn(`one${i}@example.com`, "guess", { from });
    expect((await signIn("one-more@example.com", "guess", { from })).status).toBe(429);
    // The proxy's own entries are skipped: the client is the last address not a proxy.
    expect((await signIn("two@example.com", "guess", { from: `${from}, 127.0.0.1` })).status).toBe(429);

    // Without TRUSTED_PROXIES the header is ignored: every request counts against the peer.
    const direct = serveApp(h.app, {
      hostname: "127.0.0.1",
      port: 0,
      config: { ...h.ctx.config, trustedProxies: [] },
      log: h.ctx.log,
    });
    try {
      const url = `http://127.0.0.1:${direct.port}`;
      for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++)
        expect((await signIn(`direct${i}@example.com`, "guess", { from: freshAddress(), url })).status).toBe(401);
      expect((await signIn("direct-last@example.com", "guess", { from: freshAddress(), url })).status).toBe(429);
    } finally {
      await direct.stop(true);
    }
  }, 180_000);
});
