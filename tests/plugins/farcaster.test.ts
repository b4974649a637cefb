/**
 * Farcaster specifics beyond the conformance suite: the managed-signer page (approval pending, a
 * tampered carried signer, a key request signed by the wrong custody key), and casting details (threads,
 * reply_to, channel, idempotency key, byte limit).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import type { PluginContext } from "../../src/platform/sdk.ts";
import farcaster from "../../plugins/farcaster/index.ts";
import { createFarcasterEmulator, SANDBOX_SETTINGS, type FarcasterEmulator } from "../../plugins/farcaster/emulator.ts";
import { SIGNED_KEY_REQUEST_DOMAIN, SIGNED_KEY_REQUEST_TYPES } from "../../plugins/farcaster/index.ts";
import {
  CastType,
  Message,
  SIGNED_KEY_REQUEST_VALIDATOR_EIP_712_DOMAIN,
  SIGNED_KEY_REQUEST_VALIDATOR_EIP_712_TYPES,
  validations,
} from "@farcaster/core";
import { job } from "./support.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../support/connect-kit.ts";

function env(served: ServedEmulator, overrides: Record<string, string> = {}) {
  return {
    CRIER_FARCASTER_API_URL: served.url,
    CRIER_FARCASTER_API_KEY: SANDBOX_SETTINGS.API_KEY,
    CRIER_FARCASTER_APP_FID: SANDBOX_SETTINGS.APP_FID,
    CRIER_FARCASTER_APP_MNEMONIC: SANDBOX_SETTINGS.APP_MNEMONIC,
    ...overrides,
  };
}

async function hostedPage(h: ListeningHarness, token: string) {
  const res = await h.request("POST", "/v1/accounts/connect/farcaster", { token });
  expect(res.status).toBe(201);
  expect(res.body.data.mode).toBe("managed_signer");
  const page = await fetch(res.body.data.hosted_url);
  return { status: page.status, html: await page.text() };
}

const hidden = (html: string) =>
  new URLSearchParams(
    [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
const approvalLink = (html: string) => /<a href="([^"]*)" target="_blank"/.exec(html)?.[1].replace(/&amp;/g, "&");

describe("managed-signer connect page", () => {
  let emulator: FarcasterEmulator;
  let served: ServedEmulator;
  let h: ListeningHarness;
  beforeAll(async () => {
    emulator = createFarcasterEmulator();
    served = serveEmulator(emulator);
    h = await listeningHarness(env(served));
  });
  afterAll(async () => {
    await h.stop();
    await served.stop();
  });

  test("before approval the page says so and keeps the link; after approval it connects", async () => {
    const { token } = await h.profile();
    const page = await hostedPage(h, token);
    expect(page.status).toBe(200);
    const link = approvalLink(page.html);
    expect(link).toStartWith(served.url);
    const form = hidden(page.html);
    const early = await fetch(`${h.url}/connect/farcaster`, { method: "POST", body: form });
    const earlyHtml = await early.text();
    expect(early.status).toBe(400);
    expect(earlyHtml).toContain("Not approved yet");
    expect(approvalLink(earlyHtml)).toBe(link!);
    await (await fetch(link!)).text();
    const done = await fetch(`${h.url}/connect/farcaster`, { method: "POST", body: hidden(earlyHtml) });
    expect(await done.text()).toContain("Account connected");
    const list = await h.request("GET", "/v1/accounts", { token });
    expect(list.body.data[0]).toMatchObject({ platform: "farcaster", username: "sandbox-caster", status: "active" });
  });

  test("a carried signer that was swapped connects nothing", async () => {
    const { token } = await h.profile();
    const page = await hostedPage(h, token);
    await (await fetch(approvalLink(page.html)!)).text();
    const form = hidden(page.html);
    form.set("carry__signer_uuid", crypto.randomUUID());
    const res = await fetch(`${h.url}/connect/farcaster`, { method: "POST", body: form });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("altered");
    expect((await h.request("GET", "/v1/accounts", { token })).body.data).toHaveLength(0);
  });

  test("a server without the Neynar settings answers 409 naming them", async () => {
    const bare = await listeningHarness({ CRIER_FARCASTER_API_URL: served.url });
    try {
      const { token } = await bare.profile();
      const res = await bare.request("POST", "/v1/accounts/connect/farcaster", { token });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("platform_not_configured");
      for (const v of ["CRIER_FARCASTER_API_KEY", "CRIER_FARCASTER_APP_FID", "CRIER_FARCASTER_APP_MNEMONIC"])
        expect(res.body.error.hint).toContain(v);
    } finally {
      await bare.stop();
    }
  });

  test("a key request signed by another key than the app's custody address is refused by Neynar", async () => {
    const wrong = await listeningHarness(
      env(served, {
        CRIER_FARCASTER_APP_MNEMONIC:
          "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
      }),
    );
    try {
      const { token } = await wrong.profile();
      const page = await hostedPage(wrong, token);
      expect(page.status).toBe(400);
      expect(page.html).toContain("custody address");
    } finally {
      await wrong.stop();
    }
  });
});

describe("casting", () => {
  let emulator: FarcasterEmulator;
  let served: ServedEmulator;
  let h: ListeningHarness;
  let ctx: PluginContext;
  beforeAll(async () => {
    emulator = createFarcasterEmulator();
    served = serveEmulator(emulator);
    h = await listeningHarness(env(served));
    const { token, profileId } = await h.profile();
    const res = await h.request("POST", "/v1/accounts/connect/farcaster", { token });
    expect((await submitHostedForm(res.body.data.hosted_url)).html).toContain("Account connected");
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
    ctx = providerFor(h.ctx, row, { sandbox: false }).context;
  });
  afterAll(async () => {
    await h.stop();
    await served.stop();
  });

  test("a thread chains casts by parent hash", async () => {
    const first = await farcaster.publish!(ctx, job("one"));
    if (first.kind !== "published") throw new Error(`expected published, got ${first.kind}`);
    expect(first.url).toBe(`https://farcaster.xyz/~/conversations/${first.platformPostId}`);
    const second = await farcaster.publish!(ctx, job("two", { replyTo: { platformPostId: first.platformPostId } }));
    expect(second.kind).toBe("published");
    expect(emulator.posts().at(-1)).toMatchObject({ text: "two", replyTo: first.platformPostId });
  });

  test("reply_to and channel_id reach the cast", async () => {
    const parent = "0x" + "ab".repeat(20);
    await farcaster.publish!(ctx, job("in reply", { options: { reply_to: { hash: parent, author_fid: 3 } } }));
    expect(emulator.posts().at(-1)!.replyTo).toBe(parent);
    await farcaster.publish!(ctx, job("in a channel", { options: { channel_id: "dev" } }));
    expect(emulator.posts().at(-1)!.options).toEqual({ channel_id: "dev" });
  });

  test("the same target attempt never casts twice (Neynar idem key)", async () => {
    const j = job("only once");
    const before = emulator.posts().length;
    const a = await farcaster.publish!(ctx, j);
    const b = await farcaster.publish!(ctx, j);
    expect(a).toEqual(b);
    expect(emulator.posts().length).toBe(before + 1);
  });

  test("a 5xx after the cast was made stays retryable (the call is idempotent): the retry returns the same cast", async () => {
    const j = job("5xx on the way out");
    const before = emulator.posts().length;
    emulator.failNext({ kind: "server_error", on: "/v2/farcaster/cast", afterWork: true });
    expect((await farcaster.publish!(ctx, j)).kind).toBe("retryable");
    expect(emulator.posts().length).toBe(before + 1);
    expect((await farcaster.publish!(ctx, j)).kind).toBe("published");
    expect(emulator.posts().length).toBe(before + 1);
  });

  // Text over 1,024 bytes is refused at creation (tests/modules/posts/platform-limits.test.ts).

  test("each cast is a CastAdd message the protocol's own validator accepts, signed by the approved signer", async () => {
    const out = await farcaster.publish!(
      ctx,
      job("a cast with a picture", { media: [{ url: "https://example.com/a.png", type: "image" }] }),
    );
    if (out.kind !== "published") throw new Error(out.kind);
    const bytes = emulator.message(out.platformPostId)!;
    const message = Message.decode(bytes);
    expect((await validations.validateMessage(message)).isOk()).toBe(true);
    expect(`0x${Buffer.from(message.hash).toString("hex")}`).toBe(out.platformPostId);
    expect(message.data!.castAddBody).toMatchObject({
      type: CastType.CAST,
      text: "a cast with a picture",
      embeds: [{ url: "https://example.com/a.png" }],
    });
    const signer = await fetch(`${served.url}/v2/farcaster/signer?signer_uuid=${ctx.credentials.signer_uuid}`, {
      headers: { "x-api-key": SANDBOX_SETTINGS.API_KEY },
    }).then((r) => r.json());
    expect(`0x${Buffer.from(message.signer).toString("hex")}`).toBe(signer.public_key);
  });

  test("text over 320 bytes is a long cast, as the protocol requires", async () => {
    const out = await farcaster.publish!(ctx, job("é".repeat(200)));
    if (out.kind !== "published") throw new Error(out.kind);
    expect(Message.decode(emulator.message(out.platformPostId)!).data!.castAddBody!.type).toBe(CastType.LONG_CAST);
  });

  test("a cast the protocol refuses is refused (a parent URL over 256 bytes)", async () => {
    const res = await fetch(`${served.url}/v2/farcaster/cast`, {
      method: "POST",
      headers: { "x-api-key": SANDBOX_SETTINGS.API_KEY, "content-type": "application/json" },
      body: JSON.stringify({
        signer_uuid: ctx.credentials.signer_uuid,
        text: "hi",
        parent: `https://example.com/${"x".repeat(300)}`,
      }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain("not a valid Farcaster message");
  });

  test("the adapter signs key requests under Farcaster's own EIP-712 domain and types", () => {
    expect(SIGNED_KEY_REQUEST_DOMAIN).toEqual(SIGNED_KEY_REQUEST_VALIDATOR_EIP_712_DOMAIN);
    expect(SIGNED_KEY_REQUEST_TYPES).toEqual(SIGNED_KEY_REQUEST_VALIDATOR_EIP_712_TYPES.types);
  });

  test("a revoked signer is auth_expired", async () => {
    emulator.revokeSigner(String(ctx.credentials.signer_uuid));
    const out = await farcaster.publish!(ctx, job("after revocation"));
    expect(out.kind).toBe("auth_expired");
  });
});
