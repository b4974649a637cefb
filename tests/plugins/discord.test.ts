// The Discord plugin against its emulator over real HTTP: both ways of connecting (a webhook URL, and a
// channel through the server's bot with the one-time code as proof of control), publishing text, files
// with alt text, embeds, replies, the nonce that keeps a repeated create single, Discord's refusals, and
// the reads (metrics from reactions, fetchRecent, the server's member count).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import plugin from "../../plugins/discord/index.ts";
import { proofCode } from "../../plugins/discord/connect.ts";
import { BOT_PERMISSIONS, PERMISSION } from "../../plugins/discord/permissions.ts";
import {
  createDiscordEmulator,
  SANDBOX_APPLICATION_ID,
  SANDBOX_BOT_TOKEN,
  type DiscordEmulator,
} from "../../plugins/discord/emulator.ts";
import { serveEmulator } from "../../src/platform/emulator-kit.ts";
import { ConnectError, type ConnectAttempt, type PluginContext } from "../../src/platform/sdk.ts";
import { accounts } from "../../src/db/schema.ts";
import { listeningHarness, shownCode, submitShownForm } from "../support/connect-kit.ts";
import { makeImage } from "../support/media-files.ts";
import { job, rig, serveMedia, type Rig } from "./support.ts";

let r: Rig<DiscordEmulator>;
const media = serveMedia({
  "photo.png": { type: "image/png", bytes: await makeImage({ width: 40, height: 30, format: "png" }) },
  "big.png": { type: "image/png", bytes: new Uint8Array(11 * 1024 * 1024) },
});
const flow = plugin.connect as Extract<NonNullable<typeof plugin.connect>, { verify: unknown }>;
const settings = { BOT_TOKEN: SANDBOX_BOT_TOKEN, APPLICATION_ID: SANDBOX_APPLICATION_ID };

beforeAll(() => {
  r = rig(plugin, createDiscordEmulator(), { settings, timeoutMs: 1500 });
});
afterAll(async () => {
  await r.stop();
  media.stop();
});
beforeEach(() => r.emulator.reset());

const attempt = (): ConnectAttempt => ({ secret: crypto.randomUUID(), expiresAt: new Date(Date.now() + 300_000) });
const link = (guild: string, channel: string) => `https://discord.com/channels/${guild}/${channel}`;

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  const e = await p.then(
    () => new Error("expected a ConnectError"),
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(ConnectError);
  return e as ConnectError;
}

/** Connects #general through the bot, the owner posting the code, and returns the account's context. */
async function botChannel(): Promise<PluginContext & { saved: unknown[] }> {
  const s = r.emulator.sandbox();
  const a = attempt();
  r.emulator.userPost(s.general, `<@${s.botId}> ${proofCode(a)}`);
  const id = await flow.verify(r.connectContext(), { channel: link(s.guildId, s.general) }, a);
  return r.context({
    credentials: id.credentials,
    remoteId: id.remoteId,
    username: id.username,
    metadata: id.metadata,
  });
}

async function webhookChannel() {
  const s = r.emulator.sandbox();
  const url = r.emulator.createWebhook(s.announcements, "Releases");
  const id = await flow.verify(r.connectContext({ BOT_TOKEN: "", APPLICATION_ID: "" }), { channel: url }, attempt());
  return {
    id,
    ctx: r.context({
      credentials: id.credentials,
      remoteId: id.remoteId,
      username: id.username,
      metadata: id.metadata,
    }),
  };
}

describe("connect through the bot", () => {
  test("the page's link invites the bot with exactly the permissions it needs", async () => {
    const shown = await flow.prepare!(r.connectContext(), attempt());
    const url = new URL(shown.link!.url);
    expect(url.pathname).toEndWith("/oauth2/authorize");
    expect(url.searchParams.get("client_id")).toBe(SANDBOX_APPLICATION_ID);
    expect(url.searchParams.get("scope")).toBe("bot");
    // View Channel, Send Messages, Embed Links, Attach Files, Read Message History, Create Public Threads, Send Messages in Threads.
    expect(url.searchParams.get("permissions")).toBe("309237763072");
    expect(BOT_PERMISSIONS).toBe(1024n + 2048n + 16384n + 32768n + 65536n + (1n << 35n) + (1n << 38n));
    expect(shown.code!.value).toMatch(/^CRIER-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
  });

  test("a channel the owner proved with the code connects; the account keeps only the channel", async () => {
    const ctx = await botChannel();
    const s = r.emulator.sandbox();
    expect(ctx.account.remoteId).toBe(s.general);
    expect(ctx.account.username).toBe("#general");
    expect(ctx.credentials).toMatchObject({ mode: "bot", channel_id: s.general, guild_id: s.guildId });
    expect(JSON.stringify(ctx.credentials)).not.toContain(SANDBOX_BOT_TOKEN);
  });

  test("without the code, or with it from someone who does not manage the channel, the connect is refused", async () => {
    const s = r.emulator.sandbox();
    const a = attempt();
    const values = { channel: link(s.guildId, s.general) };
    expect((await refusal(flow.verify(r.connectContext(), values, a))).code).toBe("channel_ownership_unproven");
    // A plain member can talk in #general but holds no Manage Webhooks: not proof enough.
    r.emulator.userPost(s.general, `<@${s.botId}> ${proofCode(a)}`, s.memberId);
    expect((await refusal(flow.verify(r.connectContext(), values, a))).code).toBe("channel_ownership_unproven");
    // Another attempt's code proves nothing for this one.
    r.emulator.userPost(s.general, `<@${s.botId}> ${proofCode(attempt())}`);
    expect((await refusal(flow.verify(r.connectContext(), values, a))).code).toBe("channel_ownership_unproven");
  });

  test("a channel the bot cannot see, a voice channel, a bot without a permission, or nonsense are refused with their reason", async () => {
    const s = r.emulator.sandbox();
    const a = attempt();
    expect((await refusal(flow.verify(r.connectContext(), { channel: link(s.guildId, s.staff) }, a))).code).toBe(
      "channel_not_visible",
    );
    expect((await refusal(flow.verify(r.connectContext(), { channel: s.voice }, a))).code).toBe("channel_unsupported");
    r.emulator.denyBot(s.general, PERMISSION.ATTACH_FILES);
    const e = await refusal(flow.verify(r.connectContext(), { channel: s.general }, a));
    expect(e.code).toBe("bot_missing_permissions");
    expect(e.message).toContain("attach files");
    expect((await refusal(flow.verify(r.connectContext(), { channel: "general" }, a))).code).toBe("channel_invalid");
  });

  test("a revoked bot token is named as the administrator's to fix", async () => {
    const s = r.emulator.sandbox();
    r.emulator.revokeToken(SANDBOX_BOT_TOKEN);
    expect((await refusal(flow.verify(r.connectContext(), { channel: s.general }, attempt()))).message).toContain(
      "CRIER_DISCORD_BOT_TOKEN",
    );
  });
});

describe("connect with a webhook URL", () => {
  test("a webhook of the channel connects without any bot, its token kept as the credential", async () => {
    const { id } = await webhookChannel();
    const s = r.emulator.sandbox();
    expect(id.remoteId).toBe(s.announcements);
    expect(id.username).toBe("Releases (webhook)");
    expect(id.credentials).toMatchObject({ mode: "webhook", channel_id: s.announcements });
    expect(String(id.credentials.webhook_token)).toHaveLength(68);
  });

  test("only Discord's own webhook URLs are taken: another host is refused before any request", async () => {
    const s = r.emulator.sandbox();
    const real = r.emulator.createWebhook(s.general);
    const path = new URL(real).pathname;
    for (const bad of [
      `https://evil.example${path}`,
      `http://discord.com${path}`,
      `https://discord.com.evil.example${path}`,
      `https://127.0.0.1${path}`,
    ]) {
      expect((await refusal(flow.verify(r.connectContext(), { channel: bad }, attempt()))).code).toBe(
        "webhook_url_invalid",
      );
    }
    r.emulator.deleteWebhook(real);
    expect((await refusal(flow.verify(r.connectContext(), { channel: real }, attempt()))).code).toBe("webhook_unknown");
  });

  test("end to end: the hosted page shows the invite link and the code, and a pasted webhook URL connects", async () => {
    const served = serveEmulator(r.emulator);
    const h = await listeningHarness({
      CRIER_DISCORD_API_URL: served.url,
      CRIER_DISCORD_BOT_TOKEN: SANDBOX_BOT_TOKEN,
      CRIER_DISCORD_APPLICATION_ID: SANDBOX_APPLICATION_ID,
    });
    try {
      const { token, profileId } = await h.profile();
      const res = await h.request("POST", "/v1/accounts/connect/discord", { token });
      expect(res.status).toBe(201);
      const page = await fetch(res.body.data.hosted_url);
      const html = await page.text();
      expect(html).toContain(
        `/oauth2/authorize?client_id=${SANDBOX_APPLICATION_ID}&amp;scope=bot&amp;permissions=${BOT_PERMISSIONS}`,
      );
      expect(shownCode(html)).toMatch(/^CRIER-/);
      // The channels the bot can post in are offered to pick from; a voice channel and one it cannot see are not.
      const s = r.emulator.sandbox();
      const offered = [...html.matchAll(/<option value="([^"]*)">([^<]*)<\/option>/g)].map((m) => [m[1], m[2]]);
      expect(offered).toEqual([
        [link(s.guildId, s.general), "Crier sandbox › #general"],
        [link(s.guildId, s.announcements), "Crier sandbox › #announcements"],
      ]);
      const url = r.emulator.createWebhook(r.emulator.sandbox().general, "Crier");
      const done = await submitShownForm(res.body.data.hosted_url, html, { channel: url });
      expect(done.html).toContain("Account connected");
      const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
      expect(row.credentials).not.toContain(url.split("/").at(-1)!);

      // Through the bot: pick #announcements, post the page's code there as its owner, connect.
      const again = await h.request("POST", "/v1/accounts/connect/discord", { token });
      const second = await (await fetch(again.body.data.hosted_url)).text();
      r.emulator.userPost(s.announcements, `<@${s.botId}> ${shownCode(second)}`);
      const picked = await submitShownForm(again.body.data.hosted_url, second, {
        channel: link(s.guildId, s.announcements),
      });
      expect(picked.html).toContain("Account connected");
      const list = await h.request("GET", "/v1/accounts", { token });
      expect(list.body.data.map((a: { username: string }) => a.username).sort()).toEqual([
        "#announcements",
        "Crier (webhook)",
      ]);
    } finally {
      await h.stop();
      await served.stop();
    }
  });
});

describe("publishing", () => {
  test("files go up as attachments with their alt text; embeds and flags travel with the text", async () => {
    const ctx = await botChannel();
    const out = await plugin.publish!(
      ctx,
      job("Release notes", {
        media: [{ url: media.url("photo.png"), type: "image", alt_text: "The new dashboard" }],
        options: { embeds: [{ title: "v2.0", description: "What changed", color: 0x5865f2 }], silent: true },
      }),
    );
    expect(out).toMatchObject({ kind: "published" });
    const post = r.emulator.posts().at(-1)!;
    expect(post.media).toEqual([
      expect.objectContaining({ type: "image", contentType: "image/png", alt: "The new dashboard" }),
    ]);
    expect(post.options).toMatchObject({
      embeds: [{ title: "v2.0", description: "What changed", color: 0x5865f2 }],
      flags: 1 << 12,
    });
    if (out.kind === "published")
      expect(out.url).toBe(
        `https://discord.com/channels/${r.emulator.sandbox().guildId}/${ctx.account.remoteId}/${out.platformPostId}`,
      );
  });

  test("a thread's next item and a first comment reply to the message before them", async () => {
    const ctx = await botChannel();
    const first = await plugin.publish!(ctx, job("1/2"));
    if (first.kind !== "published") throw new Error(JSON.stringify(first));
    const second = await plugin.publish!(
      ctx,
      job("2/2", { replyTo: { platformPostId: first.platformPostId, rootPlatformPostId: first.platformPostId } }),
    );
    expect(second.kind).toBe("published");
    expect(r.emulator.posts().at(-1)).toMatchObject({ text: "2/2", replyTo: first.platformPostId });
    const comment = await plugin.firstComment!.publish(ctx, {
      text: "Discuss below",
      parent: { platformPostId: first.platformPostId, url: null },
      options: {},
      idempotencyToken: "c1",
    });
    expect(comment.kind).toBe("published");
    expect(r.emulator.posts().at(-1)).toMatchObject({ text: "Discuss below", replyTo: first.platformPostId });
  });

  test("the same target sent twice is one message: the nonce makes Discord answer the first", async () => {
    const ctx = await botChannel();
    const j = job("only once");
    const a = await plugin.publish!(ctx, j);
    const b = await plugin.publish!(ctx, j);
    expect(a.kind).toBe("published");
    expect(b).toEqual(a);
    expect(r.emulator.posts().filter((p) => p.text === "only once")).toHaveLength(1);
    // Another target with the same text is another message.
    await plugin.publish!(ctx, job("only once"));
    expect(r.emulator.posts().filter((p) => p.text === "only once")).toHaveLength(2);
  });

  test("through a webhook: text and files post, a thread's next item follows as a plain message", async () => {
    const { ctx } = await webhookChannel();
    const first = await plugin.publish!(
      ctx,
      job("hooked", { media: [{ url: media.url("photo.png"), type: "image", alt_text: "alt" }] }),
    );
    expect(first.kind).toBe("published");
    if (first.kind !== "published") return;
    expect(r.emulator.posts().at(-1)).toMatchObject({
      text: "hooked",
      media: [expect.objectContaining({ alt: "alt" })],
    });
    const next = await plugin.publish!(ctx, job("next", { replyTo: { platformPostId: first.platformPostId } }));
    expect(next.kind).toBe("published");
    expect(r.emulator.posts().at(-1)).toMatchObject({ text: "next", replyTo: null });
    // Its reactions are read back through the webhook.
    r.emulator.react(ctx.account.remoteId, first.platformPostId, 3);
    expect((await plugin.metrics!(ctx, [first.platformPostId]))[first.platformPostId].likes).toBe(3);
    expect(await plugin.accountStats!(ctx)).toEqual({ followers: null });
  });

  test("Discord's refusals: too long, too large, no permission, rate limited, deleted webhook", async () => {
    const ctx = await botChannel();
    expect(await plugin.publish!(ctx, job("x".repeat(2001)))).toMatchObject({
      kind: "permanent",
      code: "invalid_form_body",
    });
    const big = await plugin.publish!(ctx, job("big", { media: [{ url: media.url("big.png"), type: "image" }] }));
    expect(big).toMatchObject({ kind: "permanent", code: "media_too_large" });
    r.emulator.failNext({ kind: "rate_limit", retryAfterSeconds: 2.5 });
    expect(await plugin.publish!(ctx, job("slow"))).toEqual({
      kind: "retryable",
      reason: expect.any(String),
      retryAfterMs: 2500,
    });
    r.emulator.denyBot(ctx.account.remoteId, PERMISSION.SEND_MESSAGES);
    expect(await plugin.publish!(ctx, job("denied"))).toMatchObject({ kind: "auth_expired" });
    const { ctx: hooked } = await webhookChannel();
    r.emulator.deleteWebhook(`https://discord.com/api/webhooks/${hooked.credentials.webhook_id}/x`);
    expect(await plugin.publish!(hooked, job("gone"))).toMatchObject({ kind: "auth_expired" });
    expect(r.emulator.posts()).toHaveLength(0);
  });

  test("the emulator refuses what Discord refuses: 413 for files over 10 MiB, 50035 with the field, 50006 empty", async () => {
    const s = r.emulator.sandbox();
    const post = (body: BodyInit, type?: string) =>
      fetch(`${r.served.url}/api/v10/channels/${s.general}/messages`, {
        method: "POST",
        headers: { authorization: `Bot ${SANDBOX_BOT_TOKEN}`, ...(type && { "content-type": type }) },
        body,
      });
    const form = new FormData();
    form.append("payload_json", JSON.stringify({ content: "x" }));
    form.append("files[0]", new File([new Uint8Array(10 * 1024 * 1024 + 1)], "a.bin"));
    const tooBig = await post(form);
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ code: 40005 });
    const long = await post(JSON.stringify({ content: "é".repeat(2001) }), "application/json");
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({
      code: 50035,
      errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } },
    });
    const empty = await post(JSON.stringify({}), "application/json");
    expect(await empty.json()).toMatchObject({ code: 50006 });
    const noAuth = await fetch(`${r.served.url}/api/v10/users/@me`);
    expect(noAuth.status).toBe(401);
    const unknown = await fetch(`${r.served.url}/api/v10/channels/1/messages`, {
      headers: { authorization: `Bot ${SANDBOX_BOT_TOKEN}` },
    });
    expect(await unknown.json()).toMatchObject({ code: 10003 });
  });
});

describe("reads", () => {
  test("metrics sum a message's reactions as likes; fetchRecent lists the channel; accountStats is the member count", async () => {
    const ctx = await botChannel();
    const out = await plugin.publish!(
      ctx,
      job("react to me", { media: [{ url: media.url("photo.png"), type: "image" }] }),
    );
    if (out.kind !== "published") throw new Error("not published");
    r.emulator.react(ctx.account.remoteId, out.platformPostId, 4);
    r.emulator.react(ctx.account.remoteId, out.platformPostId, 2);
    expect((await plugin.metrics!(ctx, [out.platformPostId]))[out.platformPostId]).toMatchObject({
      likes: 6,
      views: null,
    });
    const recent = await plugin.fetchRecent!(ctx, null);
    expect(recent[0]).toMatchObject({ platformPostId: out.platformPostId, content: "react to me", kind: "image" });
    expect(recent[0].media[0]).toMatchObject({ type: "image", downloadable: true });
    r.emulator.setFollowers!(1234);
    expect(await plugin.accountStats!(ctx)).toEqual({ followers: 1234 });
  });
});
