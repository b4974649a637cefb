// Security issue 26, item 3: connecting a Telegram channel checked only that the server's bot administers
// it, so any profile of the server could connect (and publish into) a channel another profile connected.
// Now whoever connects posts the attempt's one-time code in the channel, and the bot must see that post.
// Regular profiles, the real hosted form over HTTP, the Telegram emulator as CRIER_TELEGRAM_API_URL.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createTelegramEmulator, SANDBOX_BOT_TOKEN, type TelegramEmulator } from "../../plugins/telegram/emulator.ts";
import { listeningHarness, shownCode, submitShownForm, type ListeningHarness } from "../support/connect-kit.ts";

let h: ListeningHarness;
let emulator: TelegramEmulator;
let served: ServedEmulator;

beforeAll(async () => {
  emulator = createTelegramEmulator();
  served = serveEmulator(emulator);
  h = await listeningHarness({ CRIER_TELEGRAM_API_URL: served.url, CRIER_TELEGRAM_BOT_TOKEN: SANDBOX_BOT_TOKEN });
});
afterAll(async () => {
  await h.stop();
  await served.stop();
});
beforeEach(() => emulator.reset());

/** Starts a connect through the API and opens its hosted page, as the user's browser does. */
async function open(token: string) {
  const res = await h.request("POST", "/v1/accounts/connect/telegram", { token });
  expect(res.status).toBe(201);
  const url: string = res.body.data.hosted_url;
  const page = await fetch(url);
  expect(page.status).toBe(200);
  const html = await page.text();
  return { url, html, code: shownCode(html) };
}

const submit = (form: { url: string; html: string }, channel: string) =>
  submitShownForm(form.url, form.html, { channel });

async function telegramAccounts(profileId: string) {
  return h.db.db
    .select()
    .from(accounts)
    .where(and(eq(accounts.profileId, profileId), eq(accounts.platform, "telegram")));
}

/** Connects with the proof: the code shown on the page is posted in the channel first. */
async function connectWithProof(token: string, channel: string, chatId: number) {
  const form = await open(token);
  if (form.code) emulator.channelPost(chatId, form.code);
  const done = await submit(form, channel);
  expect(done.html).toContain("Account connected");
  return done;
}

const refusedForProof = (page: { status: number; html: string }) => {
  expect(page.status).toBe(400);
  expect(page.html).toContain('data-code="channel_ownership_unproven"');
};

describe("connecting a Telegram channel needs proof of control", () => {
  test("a second profile cannot connect a channel another profile connected without posting its code; with it, it can", async () => {
    const owner = await h.profile();
    const other = await h.profile();
    const chatId = emulator.channel("@owner_news", { title: "Owner news" });
    await connectWithProof(owner.token, "@owner_news", chatId);

    const form = await open(other.token);
    const refused = await submit(form, "@owner_news");
    refusedForProof(refused);
    // The page says what to post where, and keeps the same code for the next try.
    expect(refused.html).toContain(`Post ${form.code} in @owner_news`);
    expect(shownCode(refused.html)).toBe(form.code);
    expect(await telegramAccounts(other.profileId)).toEqual([]);
    const publish = await h.request("GET", "/v1/accounts", { token: other.token });
    expect(publish.body.data).toEqual([]);

    // The proof is what counts: once the code is in the channel, the second profile connects it too,
    // and the first profile's account stays connected.
    emulator.channelPost(chatId, `here is my code: ${form.code!.toLowerCase()}`);
    const again = await submit({ url: form.url, html: refused.html }, "@owner_news");
    expect(again.html).toContain("Account connected");
    expect((await telegramAccounts(other.profileId)).map((a) => a.status)).toEqual(["active"]);
    expect((await telegramAccounts(owner.profileId)).map((a) => a.status)).toEqual(["active"]);
  });

  test("the first connect of a channel needs the code too", async () => {
    const p = await h.profile();
    emulator.channel("@fresh_channel");
    const form = await open(p.token);
    expect(form.code).toMatch(/^CRIER-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(form.html).toContain("Post this one-time code in the channel");
    refusedForProof(await submit(form, "@fresh_channel"));
    expect(await telegramAccounts(p.profileId)).toEqual([]);
  });

  test("the code posted in another chat proves nothing", async () => {
    const p = await h.profile();
    emulator.channel("@target_chan");
    const elsewhere = emulator.channel("@attacker_chan");
    const form = await open(p.token);
    emulator.channelPost(elsewhere, form.code!);
    refusedForProof(await submit(form, "@target_chan"));
    expect(await telegramAccounts(p.profileId)).toEqual([]);
  });

  test("a code from another connect attempt proves nothing; the same attempt keeps its code", async () => {
    const p = await h.profile();
    const chatId = emulator.channel("@two_tries");
    const first = await open(p.token);
    const second = await open(p.token);
    expect(second.code).not.toBe(first.code);
    // Reloading an attempt's page shows the same code (what the user already posted stays valid).
    expect(shownCode(await (await fetch(first.url)).text())).toBe(first.code);
    emulator.channelPost(chatId, first.code!);
    refusedForProof(await submit(second, "@two_tries"));
    expect(await telegramAccounts(p.profileId)).toEqual([]);
    // The attempt whose code was posted connects.
    expect((await submit(first, "@two_tries")).html).toContain("Account connected");
  });

  test("an expired code is refused: the attempt ends with its link, five minutes after it was made", async () => {
    const p = await h.profile();
    const chatId = emulator.channel("@slow_user");
    const form = await open(p.token);
    emulator.channelPost(chatId, form.code!);
    h.clock.advance(5 * 60_000 + 1);
    const late = await submit(form, "@slow_user");
    expect(late.status).toBe(400);
    expect(late.html).toContain("expired");
    expect(await telegramAccounts(p.profileId)).toEqual([]);
  });

  test("the bot removes the code message when it may delete messages, and leaves it otherwise", async () => {
    const p = await h.profile();
    const tidy = emulator.channel("@tidy_chan", { canDelete: true });
    await connectWithProof(p.token, "@tidy_chan", tidy);
    expect(emulator.messages(tidy)).toEqual([]);
    const plain = emulator.channel("@plain_chan");
    const form = await open(p.token);
    emulator.channelPost(plain, form.code!);
    expect((await submit(form, "@plain_chan")).html).toContain("Account connected");
    expect(emulator.messages(plain).map((m) => m.text)).toEqual([form.code]);
  });

  test("codes of two people connecting at once are both found, whoever's read takes them", async () => {
    const a = await h.profile();
    const b = await h.profile();
    const chanA = emulator.channel("@chan_a");
    const chanB = emulator.channel("@chan_b");
    const formA = await open(a.token);
    const formB = await open(b.token);
    emulator.channelPost(chanA, formA.code!);
    emulator.channelPost(chanB, formB.code!);
    // A's connect reads (and confirms) both posts; B's code must still count.
    expect((await submit(formA, "@chan_a")).html).toContain("Account connected");
    expect((await submit(formB, "@chan_b")).html).toContain("Account connected");
  });

  test("a bot with a webhook set cannot read the code: the form says what the administrator must do", async () => {
    const p = await h.profile();
    emulator.channel("@hooked");
    const hook = await fetch(`${served.url}/bot${SANDBOX_BOT_TOKEN}/setWebhook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "https://example.com/hook" }),
    });
    expect(hook.status).toBe(200);
    const page = await submit(await open(p.token), "@hooked");
    expect(page.status).toBe(400);
    expect(page.html).toContain('data-code="telegram_updates_unavailable"');
    expect(page.html).toContain("deleteWebhook");
  });
});
