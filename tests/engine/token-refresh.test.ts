/**
 * Refreshing tokens ahead of their end: Instagram's 60-day tokens, on the engine's TestClock, against the
 * Instagram emulator aging its tokens on the same clock. An idle account is refreshed before its token
 * dies and still publishes on day 70; a token left to expire cannot be refreshed and the account asks
 * for a reconnect; two copies never refresh one account twice.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import { refreshExpiringTokens, tokenRefreshJob } from "../../src/engine/token-refresh.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { connectContext, providerFor } from "../../src/platform/host/provider.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import { createInstagramEmulator, type InstagramEmulator } from "../../plugins/instagram/emulator.ts";
import { makeJpeg } from "../support/media-fixtures.ts";
import { createHarness, type Harness } from "../support/harness.ts";

const DAY = 86_400_000;
const JPEG = makeJpeg(1, 1, 0);

let h: Harness;
let emulator: InstagramEmulator;
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let a: Engine;
let b: Engine;
let profileId: string;
let profileToken: string;
/** The token each refresh call presented. */
let refreshed: string[] = [];

beforeAll(async () => {
  // The emulator's tokens age on the test's clock.
  emulator = createInstagramEmulator({ now: () => h.clock.now().getTime() });
  // Records the refresh calls Instagram receives.
  served = serveEmulator({
    ...emulator,
    handle: (req, path) => {
      if (path === "/refresh_access_token") refreshed.push(new URL(req.url).searchParams.get("access_token") ?? "");
      return emulator.handle(req, path);
    },
  });
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(JPEG, { headers: { "content-type": "image/jpeg" } }),
  });
  const env = {
    CRIER_INSTAGRAM_API_URL: served.url,
    CRIER_INSTAGRAM_AUTHORIZE_URL: `${served.url}/oauth/authorize`,
    CRIER_INSTAGRAM_TOKEN_URL: `${served.url}/oauth/access_token`,
    CRIER_INSTAGRAM_CLIENT_ID: "sandbox",
    CRIER_INSTAGRAM_CLIENT_SECRET: "sandbox",
  };
  h = await createHarness({ env });
  a = createEngine(h.ctx, { id: "copy-a", jobs: [tokenRefreshJob] });
  b = createEngine(h.ctx, { id: "copy-b", jobs: [tokenRefreshJob] });
  ({ profileId, token: profileToken } = await h.profile());
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await served?.stop();
  media?.stop(true);
  await h?.close();
});

/** Connects an Instagram account through the plugin's OAuth flow, as a user consenting does. */
async function connect(remote: string): Promise<string> {
  const plugin = h.ctx.platforms.get("instagram")!;
  if (plugin.connect?.mode !== "oauth_authorization_url") throw new Error("unexpected connect flow");
  const c = connectContext(h.ctx, "instagram", { sandbox: false });
  const p = { state: "s", redirectUri: "http://127.0.0.1/callback", codeVerifier: "v".repeat(43) };
  const consent = await fetch(plugin.connect.authorizationUrl(c, p), { redirect: "manual" });
  const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
  const identity = await plugin.connect.exchange(c, { ...p, code });
  const one = Array.isArray(identity) ? identity[0] : identity;
  const row = await upsertConnectedAccount(h.ctx, { profileId, platform: "instagram", ...one, remoteId: remote });
  return row.id;
}

const account = async (id: string) => (await h.db.db.select().from(accounts).where(eq(accounts.id, id)))[0];

async function publishImage(id: string) {
  const { plugin, context } = providerFor(h.ctx, await account(id), { sandbox: false });
  let out = await plugin.publish!(context, {
    content: "still here",
    media: [{ url: `http://127.0.0.1:${media.port}/a.jpg`, type: "image" }],
    options: {},
    idempotencyToken: crypto.randomUUID(),
  });
  for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await plugin.checkStatus!(context, out.handle);
  return out;
}

/** Both copies run their periodic jobs, as two servers sharing the database would. */
async function runJobs() {
  await Promise.all([a.runUntilIdle(), b.runUntilIdle()]);
}

test("an account idle for 59 days is refreshed before its token ends and still publishes on day 70", async () => {
  const id = await connect("idle");
  const connected = await account(id);
  // The 60-day end is stored in the clear for the job to find.
  expect(connected.credentialsExpireAt!.getTime()).toBe(h.clock.now().getTime() + 60 * DAY);
  await runJobs();
  // Nowhere near its end: nothing to do.
  expect((await account(id)).credentials).toBe(connected.credentials);

  h.clock.advance(59 * DAY);
  await runJobs();
  const refreshed = await account(id);
  expect(refreshed.status).toBe("active");
  expect(refreshed.credentials).not.toBe(connected.credentials);
  expect(refreshed.credentialsExpireAt!.getTime()).toBe(h.clock.now().getTime() + 60 * DAY);

  h.clock.advance(11 * DAY);
  expect(await publishImage(id)).toMatchObject({ kind: "published" });
});

test("a token left to expire is refused by Meta's refresh and the account asks for a reconnect", async () => {
  // A webhook endpoint of the profile: the account's change of status is an event for it.
  h.ctx.config.webhookAllowPrivate = true;
  const hook = await h.request("POST", "/v1/webhooks", {
    token: profileToken,
    body: { url: "http://127.0.0.1:9/hook", events: ["account.auth_required"] },
  });
  expect(hook.status).toBe(201);
  const id = await connect("expired");
  // Nothing ran for 61 days (every copy was down): the token is dead when the job first sees it.
  h.clock.advance(61 * DAY);
  const { plugin, context } = providerFor(h.ctx, await account(id), { sandbox: false });
  // The emulator refuses it as Meta does (code 190), so the plugin says reconnect.
  await expect(plugin.refresh!(context)).rejects.toMatchObject({ retryable: false });
  await runJobs();
  expect((await account(id)).status).toBe("auth_required");
  const events = await h.db.rows<{ type: string; payload: unknown }>(
    sql`select type, payload from webhook_events where profile_id = ${profileId} and type = 'account.auth_required'`,
  );
  expect(events.some((e) => JSON.stringify(e.payload).includes(id))).toBe(true);
});

test("a token younger than a day is not refreshed by Meta", async () => {
  const id = await connect("young");
  const { plugin, context } = providerFor(h.ctx, await account(id), { sandbox: false });
  await expect(plugin.refresh!(context)).rejects.toMatchObject({ retryable: false });
  h.clock.advance(DAY + 1000);
  await expect(plugin.refresh!(context)).resolves.toBeTruthy();
});

test("two copies running the job at once refresh a due account once", async () => {
  const id = await connect("shared");
  h.clock.advance(54 * DAY);
  const before = await account(id);
  refreshed = [];
  // Not through the engines' job lease: the two runs overlap, and only the account's lease keeps them apart.
  await Promise.all([refreshExpiringTokens(h.ctx), refreshExpiringTokens(h.ctx)]);
  // Every due account once (this one and the one of the test before, due too by now), none twice.
  expect(refreshed.length).toBe(2);
  expect(new Set(refreshed).size).toBe(2);
  const after = await account(id);
  expect(after.credentials).not.toBe(before.credentials);
  expect(after.credentialsExpireAt!.getTime()).toBe(h.clock.now().getTime() + 60 * DAY);
});

test("a refusal while the token still works leaves the account publishing and asks again a day later", async () => {
  const id = await connect("refused-young");
  // Picked now (its end moved into the window by hand), while Meta still refuses a token this young.
  const soon = new Date(h.clock.now().getTime() + DAY);
  await h.db.db.update(accounts).set({ credentialsExpireAt: soon }).where(eq(accounts.id, id));
  refreshed = [];
  await refreshExpiringTokens(h.ctx);
  const after = await account(id);
  expect(refreshed).toHaveLength(1);
  expect(after.status).toBe("active");
  expect(after.credentialsRefreshAfter!.getTime()).toBe(h.clock.now().getTime() + DAY);
  // Not asked again before then.
  await refreshExpiringTokens(h.ctx);
  expect(refreshed).toHaveLength(1);
});
