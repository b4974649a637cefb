// Disconnecting through the API runs the plugin's remote cleanup: Telegram's bot leaves the channel once
// no connected account of the server uses it (in a sandbox: of the profile, whose emulators are its own);
// Bluesky's session is ended at the PDS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { decryptJson } from "../../src/db/crypto.ts";
import type { TelegramEmulator } from "../../plugins/telegram/emulator.ts";
import { serveEmulator } from "../../src/platform/emulator-kit.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../support/connect-kit.ts";

let h: ListeningHarness;
beforeAll(async () => {
  h = await listeningHarness();
});
afterAll(() => h.stop());

async function connect(token: string, platform: string, values: Record<string, string>) {
  const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
  expect(res.status).toBe(201);
  const page = await submitHostedForm(res.body.data.hosted_url, values);
  expect(page.html).toContain("Account connected");
  const list = await h.request("GET", "/v1/accounts", { token });
  return list.body.data.find((a: { platform: string }) => a.platform === platform) as { id: string; username: string };
}

describe("disconnect", () => {
  test("Telegram (live profiles, one bot): the bot stays while another account uses the channel, and leaves with the last one", async () => {
    const emulator = createRegistry().newEmulator("telegram") as TelegramEmulator;
    const served = serveEmulator(emulator);
    const live = await listeningHarness({
      CRIER_TELEGRAM_API_URL: served.url,
      CRIER_TELEGRAM_BOT_TOKEN: emulator.sandboxSettings!.BOT_TOKEN,
    });
    try {
      const a = await live.profile();
      const b = await live.profile();
      // A live connect proves control of the channel: the user posts the page's one-time code in it.
      const connectLive = async (token: string) => {
        const res = await live.request("POST", "/v1/accounts/connect/telegram", { token });
        const html = await (await fetch(res.body.data.hosted_url)).text();
        emulator.channelPost(emulator.channel("@shared_channel"), /<code>(CRIER-[^<]+)<\/code>/.exec(html)![1]);
        const page = await submitHostedForm(res.body.data.hosted_url, { channel: "@shared_channel" });
        expect(page.html).toContain("Account connected");
        const list = await live.request("GET", "/v1/accounts", { token });
        return list.body.data[0] as { id: string; username: string };
      };
      const accA = await connectLive(a.token);
      const accB = await connectLive(b.token);
      expect(accA.username).toBe("@shared_channel");
      const [row] = await live.db.db.select().from(accounts).where(eq(accounts.id, accA.id));
      const chatId = Number(row.remoteId);

      const first = await live.request("DELETE", `/v1/accounts/${accA.id}`, { token: a.token });
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({ deleted: false, disconnected: true });
      expect(emulator.botStatus(chatId)).toBe("administrator");

      await live.request("DELETE", `/v1/accounts/${accB.id}`, { token: b.token });
      expect(emulator.botStatus(chatId)).toBe("left");
      const [after] = await live.db.db.select().from(accounts).where(eq(accounts.id, accB.id));
      expect(after.status).toBe("disconnected");
      expect(after.credentials).toBeNull();
    } finally {
      await live.stop();
      await served.stop();
    }
  });

  test("Telegram (sandbox): each sandbox profile's bot is its own, so another profile's channel keeps it", async () => {
    const a = await h.profile({ sandbox: true });
    const b = await h.profile({ sandbox: true });
    const accA = await connect(a.token, "telegram", { channel: "@shared_channel" });
    await connect(b.token, "telegram", { channel: "@shared_channel" });
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, accA.id));
    const chatId = Number(row.remoteId);
    expect((await h.request("DELETE", `/v1/accounts/${accA.id}`, { token: a.token })).status).toBe(200);
    expect((h.ctx.platforms.emulatorFor("telegram", a.profileId) as TelegramEmulator).botStatus(chatId)).toBe("left");
    expect((h.ctx.platforms.emulatorFor("telegram", b.profileId) as TelegramEmulator).botStatus(chatId)).toBe(
      "administrator",
    );
  });

  test("Bluesky: the stored session is ended at the PDS", async () => {
    const p = await h.profile({ sandbox: true });
    const acc = await connect(p.token, "bluesky", { handle: "dana.test", app_password: "aaaa-bbbb-cccc-dddd" });
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, acc.id));
    const creds = decryptJson<{ refreshJwt: string }>(h.ctx.config.secretKey, row.credentials!);
    expect((await h.request("DELETE", `/v1/accounts/${acc.id}`, { token: p.token })).status).toBe(200);
    // The profile's emulator, in process: emulators are not served to the network.
    const refresh = await h.ctx.platforms.emulatorFor("bluesky", p.profileId)!.handle(
      new Request(`${h.url}/sandbox/bluesky/xrpc/com.atproto.server.refreshSession`, {
        method: "POST",
        headers: { authorization: `Bearer ${creds.refreshJwt}` },
      }),
      "/xrpc/com.atproto.server.refreshSession",
    );
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toEqual({ error: "ExpiredToken", message: "Token has been revoked" });
  });
});
