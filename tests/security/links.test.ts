/**
 * Security issue 26, item 5: a one-time link dies when another is issued or one is redeemed, and its
 * token never travels in a request path (so never in Crier's request log or a proxy's access log).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminCommands } from "../../src/cli/commands.ts";
import { createLogger } from "../../src/log.ts";
import { createProfile } from "../../src/modules/keys/service.ts";
import { createHarness, type Harness } from "../support/harness.ts";
import { until } from "../support/until.ts";

const PASSWORD = "correct horse battery staple";
const ATTACKER = "the attacker's own password";

let h: Harness;
let profileId = "";
const logLines: string[] = [];

beforeAll(async () => {
  h = await createHarness({}, { log: createLogger("debug", {}, (line) => void logLines.push(line)) });
  profileId = (await createProfile(h.db, "Acme", false)).id;
});
afterAll(() => h.close());

const tokenOf = (link: string) => link.split("#")[1];
const create = async (email: string) =>
  tokenOf((await adminCommands["users.create"](h.ctx, { email, profileId })).link);
const reset = async (email: string) => tokenOf((await adminCommands["users.reset-password"](h.ctx, { email })).link);
const redeem = (token: string, password: string) =>
  h.request("POST", "/auth/links/redeem", { body: { token, password } });
const lookup = (token: string) => h.request("POST", "/auth/links/lookup", { body: { token } });
const signIn = (email: string, password: string) => h.request("POST", "/auth/sign-in", { body: { email, password } });

describe("old links die", () => {
  test("a welcome link is dead once reset-password issued a new one", async () => {
    const welcome = await create("ada@example.com");
    const fresh = await reset("ada@example.com");
    const old = await redeem(welcome, ATTACKER);
    expect(old.status).toBe(400);
    expect(old.body.error.code).toBe("link_invalid");
    expect((await lookup(welcome)).status).toBe(400);
    expect((await redeem(fresh, PASSWORD)).status).toBe(200);
    expect((await signIn("ada@example.com", ATTACKER)).status).toBe(401);
  });

  test("after a password set through a newer link, the older one cannot take the account over", async () => {
    const welcome = await create("bob@example.com");
    // Two links in flight (an operator ran create twice, or a reset came in between), the newest used.
    const again = tokenOf((await adminCommands["users.create"](h.ctx, { email: "bob@example.com", profileId })).link);
    expect((await redeem(again, PASSWORD)).status).toBe(200);
    for (const stale of [welcome]) {
      const res = await redeem(stale, ATTACKER);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("link_invalid");
    }
    expect((await signIn("bob@example.com", PASSWORD)).status).toBe(200);
    expect((await signIn("bob@example.com", ATTACKER)).status).toBe(401);
  });

  test("redeeming one link revokes the user's other unused links (also those issued earlier)", async () => {
    const first = await create("cat@example.com");
    const second = await reset("cat@example.com");
    // `second` revoked `first` when issued; redeeming `second` leaves nothing usable behind.
    expect((await redeem(second, PASSWORD)).status).toBe(200);
    expect((await redeem(first, ATTACKER)).status).toBe(400);
    expect((await redeem(second, ATTACKER)).status).toBe(400);
    // Another user's link is untouched by all this.
    const dan = await create("dan@example.com");
    await reset("cat@example.com");
    expect((await lookup(dan)).status).toBe(200);
  });
});

describe("the token stays out of request paths", () => {
  test("lookup and redeem take the token in the body; the old path routes are gone", async () => {
    const token = await create("eve@example.com");
    logLines.length = 0;
    const seen = await lookup(token);
    expect(seen.status).toBe(200);
    expect(seen.body.data.email).toBe("eve@example.com");
    const set = await redeem(token, PASSWORD);
    expect(set.status).toBe(200);
    // The request line is written once the response is sent: wait for both.
    for (const path of ["/auth/links/lookup", "/auth/links/redeem"])
      await until(
        `the request log line of ${path}`,
        () => (logLines.some((l) => l.includes(`"path":"${path}"`)) ? true : undefined),
        5,
      );
    expect(logLines.join("\n")).not.toContain(token);

    const other = await create("fay@example.com");
    for (const method of ["GET", "POST"]) {
      const res = await h.request(method, `/auth/links/${other}`, {
        body: method === "POST" ? { password: PASSWORD } : undefined,
      });
      expect(res.status).toBe(404);
    }
    expect((await lookup(other)).status).toBe(200);
  });

  test("the welcome page reads the token from the fragment and sends it only in a body", async () => {
    const source = await Bun.file(new URL("../../src/web/pages/sign-in.tsx", import.meta.url)).text();
    expect(source).toContain("location.hash");
    expect(source).not.toMatch(/\/auth\/links\/\$\{/);
    expect(source).toContain('"/auth/links/lookup"');
    expect(source).toContain('"/auth/links/redeem"');
  });
});
