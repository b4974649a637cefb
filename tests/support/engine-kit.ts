/**
 * Publishing end to end in one process: the real Bluesky plugin talking over HTTP on 127.0.0.1 to its
 * emulator, accounts connected through the plugin's own connect flow, and an engine driven by the TestClock.
 */
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { connectContext } from "../../src/platform/host/provider.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import { createEngine, type Engine, type EngineOptions } from "../../src/engine/scheduler.ts";
import type { AppContext } from "../../src/context.ts";
import type { Emulator } from "../../src/platform/sdk.ts";
import { createBlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { createTelegramEmulator, SANDBOX_BOT_TOKEN, type TelegramEmulator } from "../../plugins/telegram/emulator.ts";
import { proofCode } from "../../plugins/telegram/proof.ts";
import type { Harness } from "./harness.ts";
import { postsHarness } from "./posts-kit.ts";

export interface EngineHarness extends Harness {
  emulator: Emulator;
  telegramEmulator: TelegramEmulator;
  served: ServedEmulator;
  engine: Engine;
  /** Connects a Bluesky account of the emulator through the plugin's connect flow. */
  bluesky(profileId: string, handle: string): Promise<string>;
  /** Creates a channel on the Telegram emulator with the bot as admin and connects it. */
  telegram(profileId: string, channel: string): Promise<{ accountId: string; chatId: number }>;
}

export async function engineHarness(
  opts: { engine?: EngineOptions; env?: Record<string, string> } = {},
): Promise<EngineHarness> {
  const emulator = createBlueskyEmulator();
  const served = serveEmulator(emulator);
  const telegramEmulator = createTelegramEmulator();
  const servedTelegram = serveEmulator(telegramEmulator);
  const h = await postsHarness({
    env: {
      CRIER_BLUESKY_API_URL: served.url,
      CRIER_TELEGRAM_API_URL: servedTelegram.url,
      CRIER_TELEGRAM_BOT_TOKEN: SANDBOX_BOT_TOKEN,
      ...opts.env,
    },
  });
  const engine = createEngine(h.ctx, { random: () => 0.5, ...opts.engine });
  // As src/server.ts does: the API wakes this engine and claims posts published now through it.
  h.ctx.dispatch = engine;
  const close = h.close;
  return Object.assign(h, {
    emulator,
    telegramEmulator,
    served,
    engine,
    bluesky: (profileId: string, handle: string) => connectBluesky(h.ctx, profileId, handle),
    async telegram(profileId: string, channel: string) {
      // Allowed to delete messages: the bot removes the code post, so the channel holds only what Crier posts.
      const chatId = telegramEmulator.channel(channel, { title: channel, canDelete: true });
      const plugin = h.ctx.platforms.get("telegram")!;
      if (plugin.connect?.mode !== "credential_form_url") throw new Error("unexpected Telegram connect flow");
      // The person connecting proves control of the channel: the attempt's code is posted in it.
      const attempt = { secret: crypto.randomUUID(), expiresAt: new Date(h.ctx.clock.now().getTime() + 300_000) };
      telegramEmulator.channelPost(chatId, proofCode(attempt));
      const identity = await plugin.connect.verify(
        connectContext(h.ctx, "telegram", { sandbox: false }),
        { channel },
        attempt,
      );
      return {
        accountId: (await upsertConnectedAccount(h.ctx, { profileId, platform: "telegram", ...identity })).id,
        chatId,
      };
    },
    async close() {
      await engine.stop();
      await served.stop();
      await servedTelegram.stop();
      await close();
    },
  });
}

export async function connectBluesky(ctx: AppContext, profileId: string, handle: string): Promise<string> {
  const plugin = ctx.platforms.get("bluesky")!;
  if (plugin.connect?.mode !== "credential_form_url") throw new Error("unexpected Bluesky connect flow");
  const identity = await plugin.connect.verify(connectContext(ctx, "bluesky", { sandbox: false }), {
    handle,
    app_password: "abcd-efgh-ijkl-mnop",
  });
  const row = await upsertConnectedAccount(ctx, { profileId, platform: "bluesky", ...identity });
  return row.id;
}

/**
 * Counts the Bluesky emulator's createRecord calls in flight (now) and the most seen at once, running
 * `before` ahead of each (a gate to hold answers, a sleep to slow them).
 */
export function watchCreateRecord(emulator: Emulator, before: () => Promise<unknown> | unknown) {
  const calls = { now: 0, most: 0 };
  const handle = emulator.handle.bind(emulator);
  emulator.handle = async (req, path) => {
    if (!path.endsWith("com.atproto.repo.createRecord")) return handle(req, path);
    calls.now++;
    calls.most = Math.max(calls.most, calls.now);
    try {
      await before();
      return await handle(req, path);
    } finally {
      calls.now--;
    }
  };
  return calls;
}
