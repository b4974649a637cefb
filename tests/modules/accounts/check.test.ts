/**
 * crier accounts check: the platform's cheapest read per connected account, over the real plugins and
 * their emulators (a sandbox profile), reporting token, expiry, scopes and whether it can publish.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { adminCommands } from "../../../src/cli/commands.ts";
import { accounts } from "../../../src/db/schema.ts";
import { decryptJson } from "../../../src/db/crypto.ts";
import { accountCredentials } from "../../../src/modules/accounts/service.ts";
import { workflowHarness, type WorkflowHarness } from "../../support/workflow-kit.ts";

let h: WorkflowHarness;
let bsky: string;
let x: string;
let li: string;

beforeAll(async () => {
  h = await workflowHarness();
  bsky = await h.connect("bluesky", { handle: "check.test" });
  x = await h.connect("twitter");
  li = await h.connect("linkedin");
});
afterAll(() => h.stop());

const check = () => adminCommands["accounts.check"](h.ctx, { includeSandbox: true });
const row = async (id: string) => (await check()).find((r) => r.account_id === id)!;

describe("accounts check", () => {
  test("connected accounts whose tokens work can publish; the expiry and the granted scopes are reported", async () => {
    const rows = await check();
    // LinkedIn's connect brings the member and the company page the sandbox member administers.
    expect(rows.map((r) => r.platform).sort()).toEqual(["bluesky", "linkedin", "linkedin", "twitter"]);
    const tw = rows.find((r) => r.account_id === x)!;
    expect(tw).toMatchObject({ token: "valid", can_publish: true, problems: [] });
    expect(tw.scopes.granted).toContain("tweet.write");
    expect(Date.parse(tw.expires_at!)).toBeGreaterThan(h.clock.now().getTime());
    expect((await row(bsky)).token).toBe("valid");
  });

  test("a token without the first comment's scope says so under first_comment", async () => {
    const [stored] = await h.db.db.select().from(accounts).where(eq(accounts.id, x));
    const creds = decryptJson<Record<string, unknown>>(h.ctx.config.secretKey, stored.credentials!);
    const store = accountCredentials(h.ctx);
    await store.save(x, { ...creds, scope: "tweet.read users.read media.write offline.access" });
    try {
      const r = await row(x);
      expect(r.scopes.missing.first_comment).toEqual(["tweet.write"]);
      expect(r.scopes.missing.publish).toEqual(["tweet.write"]);
    } finally {
      await store.save(x, creds);
    }
    expect((await row(x)).scopes.missing).toEqual({});
  });

  test("live profiles only, unless sandbox accounts are asked for", async () => {
    expect(await adminCommands["accounts.check"](h.ctx, {})).toEqual([]);
  });

  test("a token the platform refuses is refreshed and the read made again", async () => {
    h.emulator("bluesky").failNext({ kind: "auth_expired" });
    const r = await row(bsky);
    expect(r.token).toBe("refreshed");
    expect(r.can_publish).toBe(true);
  });

  test("an account waiting for a reconnect cannot publish, and says what to do", async () => {
    await h.db.db.update(accounts).set({ status: "auth_required" }).where(eq(accounts.id, bsky));
    const r = await row(bsky);
    expect(r.can_publish).toBe(false);
    expect(r.token).toBe("refused");
    expect(r.problems[0]).toContain("connected again");
    await h.db.db.update(accounts).set({ status: "active" }).where(eq(accounts.id, bsky));
  });

  test("a platform that cannot be reached is reported as unreachable, not as a refused token", async () => {
    h.emulator("twitter").failNext({ kind: "server_error", times: 3 });
    const r = await row(x);
    expect(r.token).toBe("unreachable");
    expect(r.can_publish).toBe(false);
    expect(r.problems[0]).toContain("Try again later");
  });

  test("the API version: accepted while LinkedIn serves it, refused past its sunset, and then no publishing", async () => {
    const served = await row(li);
    expect(served.api_version).toMatchObject({ value: "202607", accepted: true });
    expect(served.can_publish).toBe(true);
    h.clock.set(new Date("2027-08-01T00:00:00Z"));
    const sunset = await row(li);
    expect(sunset.api_version).toMatchObject({ value: "202607", accepted: false });
    expect(sunset.can_publish).toBe(false);
    expect(sunset.problems.join(" ")).toContain("CRIER_LINKEDIN_VERSION");
  });
});
