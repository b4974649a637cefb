/**
 * Issue 26, item 2 (last part): the relays of a Nostr bunker URI come from the user, so they go through
 * the address rule of every request made on a user's behalf (src/platform/address-rule.ts), at connect
 * and before each dial. Relays the operator configured (CRIER_NOSTR_API_URL, CRIER_NOSTR_RELAYS) are
 * the operator's choice and pass, which is how these tests reach the emulator on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import nostr from "../../plugins/nostr/index.ts";
import { createNostrEmulator, type NostrEmulator } from "../../plugins/nostr/emulator.ts";
import { job } from "../plugins/support.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: NostrEmulator;
let served: ServedEmulator;
let relay: string;
let h: ListeningHarness;
/** A WebSocket server on 127.0.0.1 that stands for an inside service: it counts who comes. */
let insideDials = 0;
const inside = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req, server) {
    insideDials++;
    return server.upgrade(req) ? undefined : new Response("inside");
  },
  websocket: { message() {} },
});

beforeAll(async () => {
  emulator = createNostrEmulator();
  served = serveEmulator(emulator);
  relay = served.url.replace(/^http/, "ws");
  h = await listeningHarness({ CRIER_NOSTR_API_URL: served.url, CRIER_NOSTR_TIMEOUT_MS: "1500" });
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  inside.stop(true);
});

async function connect(bunker: string) {
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/nostr", { token });
  const page = await submitHostedForm(res.body.data.hosted_url, { bunker });
  return { page, token, profileId };
}

describe("connect", () => {
  test("a bunker relay on loopback is refused before any dial", async () => {
    const uri = emulator.bunkerUri(`ws://127.0.0.1:${inside.port}`);
    const { page, token } = await connect(uri);
    expect(insideDials).toBe(0);
    expect(page.status).toBe(400);
    expect(page.html).toContain("loopback");
    expect((await h.request("GET", "/v1/accounts", { token })).body.data).toHaveLength(0);
  });

  test("a name for the same relay that resolves to loopback is refused too", async () => {
    // "localhost" reaches the emulator's relay as well, but it is not the relay the operator configured.
    const { page, token } = await connect(emulator.bunkerUri(relay.replace("127.0.0.1", "localhost")));
    expect(page.status).toBe(400);
    expect(page.html).toContain("resolves to 127.0.0.1");
    expect((await h.request("GET", "/v1/accounts", { token })).body.data).toHaveLength(0);
  });

  test("the configured relay still connects", async () => {
    const { page } = await connect(emulator.bunkerUri(relay));
    expect(page.html).toContain("Account connected");
  });
});

test("publish: stored bunker relays that now point inside are not dialled", async () => {
  const c = await connect(emulator.bunkerUri(relay));
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, c.profileId));
  const ctx = providerFor(h.ctx, row, { sandbox: false }).context;
  const creds = ctx.credentials as unknown as { bunker: { relays: string[] } };
  const moved = {
    ...ctx,
    credentials: { ...ctx.credentials, bunker: { ...creds.bunker, relays: [`ws://127.0.0.1:${inside.port}`] } },
  };
  const before = emulator.events().length;
  const out = await nostr.publish!(moved, job("must not be signed"));
  expect(out.kind).toBe("permanent");
  expect(out.kind === "permanent" && out.reason).toContain("loopback");
  expect(insideDials).toBe(0);
  expect(emulator.events().length).toBe(before);
  // The account as connected publishes.
  expect((await nostr.publish!(ctx, job("fine"))).kind).toBe("published");
});
