import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import plugin, { leaveChannel } from "../../plugins/telegram/index.ts";
import { createTelegramEmulator, SANDBOX_BOT_TOKEN, type TelegramEmulator } from "../../plugins/telegram/emulator.ts";
import { proofCode } from "../../plugins/telegram/proof.ts";
import { ConnectError, type ConnectAttempt } from "../../src/platform/sdk.ts";
import { job, rig, serveMedia, type Rig } from "./support.ts";
import { fakeImage, fakeMp4 } from "../support/media-fixtures.ts";
import { makeImage } from "../support/media-files.ts";

let r: Rig<TelegramEmulator>;
const media = serveMedia({
  "a.jpg": { type: "image/jpeg", bytes: fakeImage(2000) },
  "b.png": { type: "image/png", bytes: fakeImage(3000) },
  "anim.gif": { type: "image/gif", bytes: new Uint8Array([...new TextEncoder().encode("GIF89a"), 0, 0, 0, 0]) },
  "huge.jpg": { type: "image/jpeg", bytes: fakeImage(10 * 1024 * 1024 + 1) },
  "clip.mp4": { type: "video/mp4", bytes: fakeMp4(6000) },
  // Real photos (sharp): one of ratio 21:1 (sendPhoto takes 20 at most) and one of 4:3.
  "banner.jpg": { type: "image/jpeg", bytes: await makeImage({ width: 2100, height: 100 }) },
  "photo.jpg": { type: "image/jpeg", bytes: await makeImage({ width: 400, height: 300 }) },
});
const flow = plugin.connect as Extract<NonNullable<typeof plugin.connect>, { verify: unknown }>;
const BOT = "crier_7000000001_bot";

beforeAll(() => {
  r = rig(plugin, createTelegramEmulator(), { settings: { BOT_TOKEN: SANDBOX_BOT_TOKEN }, timeoutMs: 1500 });
});
afterAll(async () => {
  await r.stop();
  await media.stop();
});
beforeEach(() => r.emulator.reset());

const attempt = (): ConnectAttempt => ({ secret: crypto.randomUUID(), expiresAt: new Date(Date.now() + 300_000) });

/** Connects as a user does: the attempt's code is posted in the channel (the bot may delete it), then verify. */
async function proved(ref: string, values: Record<string, string> = { channel: ref }) {
  const a = attempt();
  r.emulator.channelPost(r.emulator.channel(ref, { canDelete: true }), proofCode(a));
  return flow.verify(r.connectContext(), values, a);
}

async function channel(ref = "@crierdemo") {
  const id = await proved(ref);
  return r.context({
    credentials: id.credentials,
    remoteId: id.remoteId,
    username: id.username,
    metadata: id.metadata,
  });
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a ConnectError");
    },
    (e) => {
      expect(e).toBeInstanceOf(ConnectError);
      return (e as Error).message;
    },
  );

describe("connect", () => {
  test("a channel where the bot is an administrator allowed to post connects; the token is not stored", async () => {
    const id = await proved("@crierdemo", { channel: "https://t.me/crierdemo" });
    expect(id.remoteId).toMatch(/^-100\d{10}$/);
    expect(id.username).toBe("@crierdemo");
    expect(id.credentials).toEqual({ chat_id: id.remoteId, bot_id: 7000000001 });
    expect(id.metadata).toMatchObject({ username: "crierdemo", bot_username: BOT, private: false });
    expect(JSON.stringify(id)).not.toContain(SANDBOX_BOT_TOKEN);
  });

  test("the bot must be an administrator with the right to post", async () => {
    r.emulator.channel("@members", { botStatus: "member" });
    expect(await refusal(flow.verify(r.connectContext(), { channel: "@members" }, attempt()))).toContain(`Add @${BOT}`);
    r.emulator.channel("@readonly", { botStatus: "administrator", canPost: false });
    expect(await refusal(flow.verify(r.connectContext(), { channel: "@readonly" }, attempt()))).toContain(
      "may not post",
    );
    r.emulator.channel("-1009876543210", { botStatus: "left" });
    expect(await refusal(flow.verify(r.connectContext(), { channel: "-1009876543210" }, attempt()))).toContain(
      "cannot see",
    );
  });

  test("bad input and a server without a bot token are explained", async () => {
    expect(await refusal(flow.verify(r.connectContext(), { channel: "a b" }, attempt()))).toContain("@username");
    const noToken = { ...r.connectContext(), settings: {} };
    expect(await refusal(flow.verify(noToken, { channel: "@crierdemo" }, attempt()))).toContain(
      "CRIER_TELEGRAM_BOT_TOKEN",
    );
    r.emulator.revokeToken(SANDBOX_BOT_TOKEN);
    expect(await refusal(flow.verify(r.connectContext(), { channel: "@crierdemo" }, attempt()))).toContain(
      "refused this server's bot token",
    );
  });
});

describe("proof of control of the channel", () => {
  test("the form shows the attempt's code: the same for one attempt, another for the next", async () => {
    const a = attempt();
    const shown = await flow.prepare!(r.connectContext(), a);
    expect(shown.code!.value).toMatch(/^CRIER-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect((await flow.prepare!(r.connectContext(), a)).code!.value).toBe(shown.code!.value);
    expect((await flow.prepare!(r.connectContext(), attempt())).code!.value).not.toBe(shown.code!.value);
  });

  test("without the code in the channel the connect is refused as channel_ownership_unproven, naming code and channel", async () => {
    r.emulator.channel("@unproven");
    const a = attempt();
    const e = await flow.verify(r.connectContext(), { channel: "@unproven" }, a).catch((x) => x);
    expect(e).toBeInstanceOf(ConnectError);
    expect(e.code).toBe("channel_ownership_unproven");
    expect(e.message).toContain(`Post ${proofCode(a)} in @unproven`);
    // Without an attempt (no connection page) there is no code to look for.
    expect(await refusal(flow.verify(r.connectContext(), { channel: "@unproven" }))).toContain("connection page");
  });

  test("the code in a photo's caption or an edited post counts; the bot deletes the post when it may", async () => {
    const chatId = r.emulator.channel("@captioned", { canDelete: true });
    const a = attempt();
    r.emulator.channelPost(chatId, `Connecting Crier: ${proofCode(a)} (please ignore)`);
    const id = await flow.verify(r.connectContext(), { channel: "@captioned" }, a);
    expect(id.remoteId).toBe(String(chatId));
    expect(r.emulator.messages(chatId)).toEqual([]);
  });

  test("in the sandbox the emulator posts the code as the channel's administrator", async () => {
    const sandbox = r.connectContext({ SANDBOX_ADMIN_POST_PATH: "/crier-sandbox/channel-post" });
    const a = attempt();
    expect((await flow.prepare!(sandbox, a)).code!.label).toContain("sandbox");
    const id = await flow.verify(sandbox, { channel: "@sandboxchan" }, a);
    expect(id.username).toBe("@sandboxchan");
    // The bot of the sandbox may not delete messages: the code the emulator posted stays, as it would.
    expect(r.emulator.messages(Number(id.remoteId)).map((m) => m.text)).toEqual([proofCode(a)]);
  });
});

describe("the emulator's updates, as the Bot API serves them", () => {
  const api = async (method: string, params: Record<string, unknown> = {}) => {
    const res = await fetch(`${r.served.url}/bot${SANDBOX_BOT_TOKEN}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    return { status: res.status, body: (await res.json()) as { ok: boolean; result?: any; description?: string } };
  };

  test("a person's channel post is a channel_post Update; offset confirms; allowed_updates filters later ones", async () => {
    const chatId = r.emulator.channel("@updates_chan", { title: "Updates" });
    const messageId = r.emulator.channelPost(chatId, "hello bot");
    const first = await api("getUpdates", { timeout: 0 });
    expect(first.body.result).toEqual([
      {
        update_id: expect.any(Number),
        channel_post: {
          message_id: messageId,
          sender_chat: { id: chatId, title: "Updates", type: "channel", username: "updates_chan" },
          chat: { id: chatId, title: "Updates", type: "channel", username: "updates_chan" },
          date: expect.any(Number),
          text: "hello bot",
        },
      },
    ]);
    // Unconfirmed updates come again; an offset past them confirms and forgets them.
    expect((await api("getUpdates")).body.result).toHaveLength(1);
    const next = first.body.result[0].update_id + 1;
    expect((await api("getUpdates", { offset: next })).body.result).toEqual([]);
    // A bot that asked only for private messages gets no channel posts made after it asked.
    await api("getUpdates", { offset: next, allowed_updates: ["message"] });
    r.emulator.channelPost(chatId, "not for you");
    expect((await api("getUpdates", { offset: next })).body.result).toEqual([]);
    await api("getUpdates", { allowed_updates: ["channel_post"] });
    r.emulator.channelPost(chatId, "for you");
    expect((await api("getUpdates")).body.result.map((u: any) => u.channel_post.text)).toEqual(["for you"]);
  });

  test("getUpdates is refused while a webhook is set; deleteMessage needs the right to delete", async () => {
    const chatId = r.emulator.channel("@hook_chan");
    expect((await api("setWebhook", { url: "https://example.com/hook" })).body.ok).toBe(true);
    const refused = await api("getUpdates");
    expect(refused.status).toBe(409);
    expect(refused.body.description).toContain("webhook is active");
    await api("deleteWebhook");
    expect((await api("getUpdates")).status).toBe(200);
    const id = r.emulator.channelPost(chatId, "a person's post");
    const denied = await api("deleteMessage", { chat_id: chatId, message_id: id });
    expect(denied).toMatchObject({
      status: 400,
      body: { ok: false, description: "Bad Request: message can't be deleted" },
    });
    r.emulator.channel("@hook_chan", { canDelete: true });
    expect((await api("deleteMessage", { chat_id: chatId, message_id: id })).body).toEqual({ ok: true, result: true });
    expect(r.emulator.messages(chatId)).toEqual([]);
  });
});

describe("publish", () => {
  test("text with the three options forwarded under Telegram's names; public channels get a t.me URL", async () => {
    const ctx = await channel();
    const out = await plugin.publish!(
      ctx,
      job({
        content: "hello https://example.com",
        options: { disable_notification: true, protect_content: true, disable_link_preview: true },
      }),
    );
    // Message 1 of the channel was the connect code (deleted since): Telegram never reuses an id.
    expect(out).toEqual({ kind: "published", platformPostId: "2", url: "https://t.me/crierdemo/2" });
    const [post] = r.emulator.posts();
    expect(post.text).toBe("hello https://example.com");
    expect(post.options).toMatchObject({
      disable_notification: true,
      protect_content: true,
      link_preview_disabled: true,
    });
    const plain = await plugin.publish!(ctx, job({ content: "plain" }));
    expect(plain.kind).toBe("published");
    expect(r.emulator.posts()[1].options).toEqual({ chat_id: Number(ctx.account.remoteId) });
  });

  test("a private channel has no public post URL", async () => {
    r.emulator.channel("-1001234567890");
    const ctx = await channel("-1001234567890");
    expect(ctx.account.username).toBe("Private channel -1001234567890");
    expect(await plugin.publish!(ctx, job({ content: "secret" }))).toMatchObject({ kind: "published", url: null });
  });

  test("one photo, one video and one GIF use sendPhoto, sendVideo and sendAnimation with the caption", async () => {
    const ctx = await channel();
    for (const [url, type] of [
      ["a.jpg", "image"],
      ["clip.mp4", "video"],
      ["anim.gif", "image"],
    ] as const) {
      expect(
        (await plugin.publish!(ctx, job({ content: `caption ${url}`, media: [{ url: media.url(url), type }] }))).kind,
      ).toBe("published");
    }
    expect(r.emulator.posts().map((p) => [p.text, p.media])).toEqual([
      ["caption a.jpg", [{ type: "image", contentType: "image/jpeg", size: 2000 }]],
      ["caption clip.mp4", [{ type: "video", contentType: "video/mp4", size: 6000 }]],
      ["caption anim.gif", [{ type: "image", contentType: "image/gif", size: 10 }]],
    ]);
    const sent = r.emulator.messages(Number(ctx.account.remoteId));
    expect(sent.map((m) => ["photo", "video", "animation"].find((k) => k in m))).toEqual([
      "photo",
      "video",
      "animation",
    ]);
    expect(r.emulator.posts()[1].options?.supports_streaming).toBe(true);
  });

  test("an album mixes photos and videos with the caption on the first item; its first message is the post", async () => {
    const ctx = await channel();
    const out = await plugin.publish!(
      ctx,
      job({
        content: "album",
        options: { disable_notification: true },
        media: [
          { url: media.url("a.jpg"), type: "image" },
          { url: media.url("clip.mp4"), type: "video" },
          { url: media.url("b.png"), type: "image" },
        ],
      }),
    );
    // Message 1 of the channel was the connect code (deleted since): Telegram never reuses an id.
    expect(out).toEqual({ kind: "published", platformPostId: "2", url: "https://t.me/crierdemo/2" });
    const [post] = r.emulator.posts();
    expect(post.text).toBe("album");
    expect(post.media.map((m) => m.type)).toEqual(["image", "video", "image"]);
    expect(post.options?.disable_notification).toBe(true);
    // The next post gets the next id after the album's three messages.
    expect(await plugin.publish!(ctx, job({ content: "after" }))).toMatchObject({ platformPostId: "5" });
  });

  test("a thread replies to the previous message", async () => {
    const ctx = await channel();
    const first = await plugin.publish!(ctx, job({ content: "1/2" }));
    if (first.kind !== "published") throw new Error(first.kind);
    const second = await plugin.publish!(
      ctx,
      job({
        content: "2/2",
        media: [{ url: media.url("a.jpg"), type: "image" }],
        replyTo: { platformPostId: first.platformPostId },
      }),
    );
    expect(second.kind).toBe("published");
    expect(r.emulator.posts().map((p) => p.replyTo)).toEqual([null, first.platformPostId]);
    const orphan = await plugin.publish!(ctx, job({ content: "x", replyTo: { platformPostId: "999" } }));
    expect(orphan).toMatchObject({ kind: "permanent" });
    expect(orphan.kind === "permanent" && orphan.reason).toContain("replied not found");
  });

  // Text over 4096 and captions over 1024 UTF-16 units, and 11 items, are refused at creation
  // (tests/engine/telegram.test.ts, tests/modules/posts/platform-limits.test.ts).
  test("limits: text of 4096 UTF-16 units is sent; photo 10 MB, no GIF in an album", async () => {
    const ctx = await channel();
    // An emoji is two UTF-16 units: 2048 of them are exactly 4096.
    expect((await plugin.publish!(ctx, job({ content: "😀".repeat(2048) }))).kind).toBe("published");
    expect(await plugin.publish!(ctx, job({ media: [{ url: media.url("huge.jpg"), type: "image" }] }))).toMatchObject({
      kind: "permanent",
      code: "media_too_large",
    });
    expect(
      await plugin.publish!(
        ctx,
        job({
          media: [
            { url: media.url("a.jpg"), type: "image" },
            { url: media.url("anim.gif"), type: "image" },
          ],
        }),
      ),
    ).toMatchObject({ kind: "permanent", code: "gif_in_album" });
    expect(r.emulator.posts()).toHaveLength(1);
  });
});

describe("what sendPhoto reads in the photo", () => {
  test("a width-to-height ratio over 20 is PHOTO_INVALID_DIMENSIONS; a 4:3 photo is sent", async () => {
    const ctx = await channel();
    const photo = (name: string) => job({ media: [{ url: media.url(name), type: "image" }] });
    expect(await plugin.publish!(ctx, photo("banner.jpg"))).toMatchObject({
      kind: "permanent",
      reason: expect.stringContaining("PHOTO_INVALID_DIMENSIONS"),
    });
    expect((await plugin.publish!(ctx, photo("photo.jpg"))).kind).toBe("published");
  });
});

describe("failures map to outcomes", () => {
  test("429 is retryable after retry_after seconds", async () => {
    const ctx = await channel();
    r.emulator.failNext({ kind: "rate_limit", on: "sendMessage", retryAfterSeconds: 17 });
    expect(await plugin.publish!(ctx, job({ content: "x" }))).toMatchObject({
      kind: "retryable",
      retryAfterMs: 17_000,
    });
    expect(r.emulator.posts()).toHaveLength(0);
  });

  // sendPhoto creates the message and Telegram documents no idempotency key: after a 5xx the message may
  // exist, so the outcome is unknown rather than retryable (the engine never sends it again by itself).
  test("a 5xx answer to the sending call is unknown", async () => {
    const ctx = await channel();
    r.emulator.failNext({ kind: "server_error", on: "sendPhoto" });
    expect((await plugin.publish!(ctx, job({ media: [{ url: media.url("a.jpg"), type: "image" }] }))).kind).toBe(
      "unknown",
    );
  });

  test("a timeout after sendMessage was sent is unknown: the message exists", async () => {
    const ctx = await channel();
    r.emulator.failNext({ kind: "timeout", on: "sendMessage", delayMs: 4000 });
    expect((await plugin.publish!(ctx, job({ content: "maybe" }))).kind).toBe("unknown");
    expect(r.emulator.posts()).toHaveLength(1);
  });

  test("a refused token or a bot removed from the channel is auth_expired (the user must reconnect)", async () => {
    const ctx = await channel();
    r.emulator.failNext({ kind: "auth_expired" });
    expect((await plugin.publish!(ctx, job({ content: "x" }))).kind).toBe("auth_expired");
    r.emulator.channel("@crierdemo", { botStatus: "kicked" });
    const out = await plugin.publish!(ctx, job({ content: "x" }));
    expect(out.kind).toBe("auth_expired");
    expect(out.kind === "auth_expired" && out.reason).toContain("kicked");
  });

  test("without a bot token publishing fails for good with a hint", async () => {
    const ctx = r.context({ credentials: { chat_id: "-1001000000001" }, settings: {} });
    ctx.settings = {};
    expect(await plugin.publish!(ctx, job({ content: "x" }))).toMatchObject({
      kind: "permanent",
      code: "platform_not_configured",
    });
  });
});

describe("declaration and disconnect", () => {
  test("platform_options take exactly the three booleans", () => {
    const s = plugin.optionsSchema;
    expect(Value.Check(s, { disable_notification: true, protect_content: false, disable_link_preview: true })).toBe(
      true,
    );
    expect(Value.Check(s, {})).toBe(true);
    expect(Value.Check(s, { disable_notification: true, parse_mode: "HTML" })).toBe(false);
    expect(Value.Check(s, { protect_content: "yes" })).toBe(false);
  });

  test("no source: bots cannot read channel history or counts", () => {
    expect(plugin.capabilities.source).toBe(false);
    expect(plugin.capabilities.backfill).toBe(false);
    expect(plugin.fetchRecent).toBeUndefined();
    expect(plugin.metrics).toBeUndefined();
    expect(plugin.textLimit).toEqual({ max: 4096, unit: "utf16", withMediaMax: 1024 });
    expect(plugin.disconnect?.disableRecord).toBe(true);
  });

  test("on disconnect the bot leaves the channel", async () => {
    const ctx = await channel();
    const chatId = Number(ctx.account.remoteId);
    expect(r.emulator.botStatus(chatId)).toBe("administrator");
    await leaveChannel(ctx);
    expect(r.emulator.botStatus(chatId)).toBe("left");
  });
});
