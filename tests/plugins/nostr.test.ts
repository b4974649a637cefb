/**
 * Nostr specifics beyond the conformance suite, over real WebSockets to the emulator's relay: the bunker
 * URI check, a wrong secret, NIP-10 thread tags, imeta tags for media, engagement counted from events,
 * a signer that stopped signing for Crier, and the best-effort logout when the account is disconnected.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import type { PluginContext } from "../../src/platform/sdk.ts";
import nostr from "../../plugins/nostr/index.ts";
import { createNostrEmulator, type NostrEmulator } from "../../plugins/nostr/emulator.ts";
import { job } from "./support.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: NostrEmulator;
let served: ServedEmulator;
let relay: string;
let h: ListeningHarness;

beforeAll(async () => {
  emulator = createNostrEmulator();
  served = serveEmulator(emulator);
  relay = served.url.replace(/^http/, "ws");
  h = await listeningHarness({ CRIER_NOSTR_API_URL: served.url, CRIER_NOSTR_TIMEOUT_MS: "2000" });
});
afterAll(async () => {
  await h.stop();
  await served.stop();
});

async function connect(bunker: string) {
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/nostr", { token });
  expect(res.body.data).toMatchObject({ mode: "remote_signer", authorization_url: null });
  const page = await submitHostedForm(res.body.data.hosted_url, { bunker });
  return { page, token, profileId };
}

describe("connect", () => {
  test("a value that is not a bunker URI is refused on the page", async () => {
    const { page } = await connect("nsec1notabunker");
    expect(page.status).toBe(400);
    expect(page.html).toContain("Enter a bunker URI");
  });

  test("a wrong secret is refused by the signer and connects nothing", async () => {
    const uri = emulator.bunkerUri(relay).replace(/secret=[^&]+/, "secret=wrong");
    const { page, token } = await connect(uri);
    expect(page.status).toBe(400);
    expect(page.html).toContain("invalid secret");
    expect((await h.request("GET", "/v1/accounts", { token })).body.data).toHaveLength(0);
  });

  test("the account is the signer's user key, shown as an npub", async () => {
    const { page, token } = await connect(emulator.bunkerUri(relay));
    expect(page.html).toContain("Account connected");
    const list = await h.request("GET", "/v1/accounts", { token });
    expect(list.body.data[0].username).toStartWith("npub1");
    expect(list.body.data[0].capabilities.connection_mode).toBe("remote_signer");
  });
});

describe("notes", () => {
  let ctx: PluginContext;
  let token: string;
  let accountId: string;
  beforeAll(async () => {
    const c = await connect(emulator.bunkerUri(relay));
    token = c.token;
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, c.profileId));
    accountId = row.id;
    ctx = providerFor(h.ctx, row, { sandbox: false }).context;
    expect(row.remoteId).toBe(emulator.userPubkey());
  });

  const eventOf = (id: string) => emulator.events().find((e) => e.id === id)!;

  test("a thread carries NIP-10 root and reply tags", async () => {
    const root = await nostr.publish!(ctx, job("root #crier"));
    if (root.kind !== "published") throw new Error(root.kind);
    expect(root.url).toStartWith("https://njump.me/nevent1");
    expect(eventOf(root.platformPostId).tags).toContainEqual(["t", "crier"]);
    const second = await nostr.publish!(ctx, job("second", { replyTo: { platformPostId: root.platformPostId } }));
    if (second.kind !== "published") throw new Error(second.kind);
    expect(eventOf(second.platformPostId).tags).toContainEqual(["e", root.platformPostId, relay, "root"]);
    const third = await nostr.publish!(
      ctx,
      job("third", { replyTo: { platformPostId: second.platformPostId, rootPlatformPostId: root.platformPostId } }),
    );
    if (third.kind !== "published") throw new Error(third.kind);
    const tags = eventOf(third.platformPostId).tags;
    expect(tags).toContainEqual(["e", root.platformPostId, relay, "root"]);
    expect(tags).toContainEqual(["e", second.platformPostId, relay, "reply"]);
    expect(tags).toContainEqual(["p", emulator.userPubkey()]);
  });

  test("media go as URLs with imeta tags", async () => {
    const out = await nostr.publish!(
      ctx,
      job("look", { media: [{ url: "https://cdn.example/a.png", type: "image", width: 10, height: 20 }] }),
    );
    if (out.kind !== "published") throw new Error(out.kind);
    const e = eventOf(out.platformPostId);
    expect(e.content).toBe("look\nhttps://cdn.example/a.png");
    expect(e.tags).toContainEqual(["imeta", "url https://cdn.example/a.png", "m image/png", "dim 10x20"]);
    expect(emulator.posts().at(-1)!.media).toEqual([{ type: "image", contentType: "image/png" }]);
  });

  test("the relay checks events with nostr-tools and reads them by the NIPs", async () => {
    const { finalizeEvent, generateSecretKey } = await import("nostr-tools/pure");
    const ws = new WebSocket(relay);
    await new Promise((r) => ws.addEventListener("open", r, { once: true }));
    const send = async (event: unknown) => {
      ws.send(JSON.stringify(["EVENT", event]));
      return new Promise<unknown[]>((r) =>
        ws.addEventListener("message", (m) => r(JSON.parse(String(m.data))), { once: true }),
      );
    };
    const sk = generateSecretKey();
    // NIP-92: an imeta tag whose url is not in the content, or with no field but the url, is not media.
    const note = finalizeEvent(
      {
        kind: 1,
        created_at: Math.floor(Date.now() / 1000),
        content: "no link here",
        tags: [
          ["imeta", "url https://cdn.example/x.png", "m image/png"],
          ["imeta", "url https://cdn.example/y.png"],
        ],
      },
      sk,
    );
    expect(await send(note)).toEqual(["OK", note.id, true, ""]);
    expect(emulator.posts().at(-1)).toMatchObject({ id: note.id, media: [] });
    // NIP-01: a tampered event fails verifyEvent and is refused.
    expect(await send({ ...note, content: "changed" })).toEqual([
      "OK",
      note.id,
      false,
      "invalid: bad event id or signature",
    ]);
    ws.close();
  });

  test("metrics count reactions, reposts and replies", async () => {
    const out = await nostr.publish!(ctx, job("count me"));
    if (out.kind !== "published") throw new Error(out.kind);
    emulator.engage(out.platformPostId, { likes: 3, reposts: 2, replies: 1 });
    const m = await nostr.metrics!(ctx, [out.platformPostId]);
    expect(m[out.platformPostId]).toMatchObject({ likes: 3, shares: 2, comments: 1, views: null });
  });

  test("disconnecting asks the signer to log Crier out; a signer that stopped signing is auth_expired", async () => {
    const del = await h.request("DELETE", `/v1/accounts/${accountId}`, { token });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ disconnected: true, provider_revocation_required: false });
    // The old client key is forgotten by the signer: signing with it is refused.
    const out = await nostr.publish!(ctx, job("after logout"));
    expect(out.kind).toBe("auth_expired");
  });
});
