// Disconnecting through the API runs the plugin's remote cleanup: Telegram's bot leaves the channel once
// no connected account of the server uses it; Bluesky's session is ended at the PDS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { decryptJson } from "../../src/db/crypto.ts";
import type { TelegramEmulator } from "../../plugins/telegram/emulator.ts";
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
  test("Telegram: the bot stays while another account uses the channel, and leaves with the last one", async () => {
    const a = await h.profile({ sandbox: true });
    const b = await h.profile({ sandbox: true });
    const accA = await connect(a.token, "telegram", { channel: "@shared_channel" });
    const accB = await connect(b.token, "telegram", { channel: "@shared_channel" });
    expect(accA.username).toBe("@shared_channel");
    const emulator = h.ctx.platforms.emulatorFor("telegram") as TelegramEmulator;
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, accA.id));
    const chatId = Number(row.remoteId);

    const first = await h.request("DELETE", `/v1/accounts/${accA.id}`, { token: a.token });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ deleted: false, disconnected: true });
    expect(emulator.botStatus(chatId)).toBe("administrator");

    await h.request("DELETE", `/v1/accounts/${accB.id}`, { token: b.token });
    expect(emulator.botStatus(chatId)).toBe("left");
    const [after] = await h.db.db.select().from(accounts).where(eq(accounts.id, accB.id));
    expect(after.status).toBe("disconnected");
    expect(after.credentials).toBeNull();
  });

  test("Bluesky: the stored session is ended at the PDS", async () => {
    const p = await h.profile({ sandbox: true });
    const acc = await connect(p.token, "bluesky", { handle: "dana.test", app_password: "aaaa-bbbb-cccc-dddd" });
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, acc.id));
    const creds = decryptJson<{ refreshJwt: string }>(h.ctx.config.secretKey, row.credentials!);
    expect((await h.request("DELETE", `/v1/accounts/${acc.id}`, { token: p.token })).status).toBe(200);
    const refresh = await fetch(`${h.url}/sandbox/bluesky/xrpc/com.atproto.server.refreshSession`, {
      method: "POST",
      headers: { authorization: `Bearer ${creds.refreshJwt}` },
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toEqual({ error: "ExpiredToken", message: "Token has been revoked" });
  });
});
