import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SANDBOX_BOT_TOKEN } from "../../plugins/telegram/emulator.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

// Publishing to Telegram channels (and to Telegram and Bluesky in one post) through the real plugins
// and their emulators over HTTP on 127.0.0.1, the engine driven by the TestClock.

let h: EngineHarness;
let token: string;
let profileId: string;

beforeAll(async () => {
  h = await engineHarness();
  ({ token, profileId } = await h.profile());
});
afterAll(() => h.close());

const create = (body: unknown) => h.request("POST", "/v1/posts", { token, body });
const read = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data;
const texts = (chatId: number) => h.telegramEmulator.messages(chatId).map((m) => m.text);

describe("Telegram", () => {
  test("a text post reaches the channel once, with the options Telegram accepts", async () => {
    const { accountId, chatId } = await h.telegram(profileId, "@crier_news");
    const res = await create({
      content: "Hello channel",
      targets: [{ account_id: accountId, platform_options: { disable_notification: true } }],
    });
    expect(res.status).toBe(201);
    await h.engine.runUntilIdle();
    const t = (await read(res.body.data.id)).targets[0];
    expect(t).toMatchObject({ status: "published", platform: "telegram" });
    expect(t.platform_post_url).toBe(`https://t.me/crier_news/${t.platform_post_id}`);
    expect(texts(chatId)).toEqual(["Hello channel"]);
  });

  test("options Telegram does not know and text over its limit are refused at creation, naming the target", async () => {
    const { accountId } = await h.telegram(profileId, "@crier_rules");
    const bad = await create({
      content: "x",
      targets: [{ account_id: accountId, platform_options: { title: "no titles here" } }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_platform_options");
    expect(bad.body.error.message).toContain(`targets[0] (account ${accountId}, telegram)`);
    const wrongType = await create({
      content: "x",
      targets: [{ account_id: accountId, platform_options: { protect_content: "yes" } }],
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.code).toBe("invalid_platform_options");
    const long = await create({ content: "y".repeat(4097), targets: [{ account_id: accountId }] });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("content_too_long");
  });

  test("Telegram's limits are checked at creation as Telegram counts them: UTF-16 units, 1024 with media", async () => {
    const { accountId } = await h.telegram(profileId, "@crier_limits");
    // 2,049 emoji are 2,049 code points but 4,098 UTF-16 units: over Telegram's 4,096.
    const emoji = await create({ content: "😀".repeat(2049), targets: [{ account_id: accountId }] });
    expect(emoji.status).toBe(400);
    expect(emoji.body.error.code).toBe("content_too_long");
    const image = { url: "https://cdn.example.com/a.png", type: "image" };
    const caption = await create({ content: "c".repeat(1025), media: [image], targets: [{ account_id: accountId }] });
    expect(caption.status).toBe(400);
    expect(caption.body.error.code).toBe("content_too_long");
    expect(caption.body.error.message).toContain("1024 with media");
    // Accepted ones are scheduled far ahead so they do not publish during the tests that follow.
    const publish_at = new Date(h.clock.now().getTime() + 30 * 86400_000).toISOString();
    expect(
      (await create({ content: "c".repeat(1024), media: [image], publish_at, targets: [{ account_id: accountId }] }))
        .status,
    ).toBe(201);
    expect((await create({ content: "c".repeat(1025), publish_at, targets: [{ account_id: accountId }] })).status).toBe(
      201,
    );
  });

  test("429 with retry_after: waits that long, then exactly one message", async () => {
    const { accountId, chatId } = await h.telegram(profileId, "@crier_busy");
    h.telegramEmulator.failNext({ kind: "rate_limit", on: "sendMessage", retryAfterSeconds: 90 });
    const post = (await create({ content: "patience", targets: [{ account_id: accountId }] })).body.data;
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0]).toMatchObject({ status: "scheduled", error_code: "retry_scheduled" });
    h.clock.advance(80_000);
    await h.engine.runUntilIdle();
    expect(texts(chatId)).toEqual([]);
    h.clock.advance(15_000);
    await h.engine.runUntilIdle();
    expect((await read(post.id)).status).toBe("published");
    expect(texts(chatId)).toEqual(["patience"]);
  });

  test("one post to Bluesky and Telegram: each published once; a revoked bot makes the post partial", async () => {
    const bsky = await h.bluesky(profileId, "cross.test");
    const { accountId: tg, chatId } = await h.telegram(profileId, "@crier_cross");
    const before = h.emulator.posts().length;
    const both = (await create({ content: "everywhere", targets: [{ account_id: bsky }, { account_id: tg }] })).body
      .data;
    await h.engine.runUntilIdle();
    expect((await read(both.id)).status).toBe("published");
    expect(
      h.emulator
        .posts()
        .slice(before)
        .map((p) => p.text),
    ).toEqual(["everywhere"]);
    expect(texts(chatId)).toEqual(["everywhere"]);

    h.telegramEmulator.revokeToken(SANDBOX_BOT_TOKEN);
    const half = (await create({ content: "half", targets: [{ account_id: bsky }, { account_id: tg }] })).body.data;
    await h.engine.runUntilIdle();
    const done = await read(half.id);
    expect(done.status).toBe("partial");
    expect(done.targets.map((t: any) => t.status)).toEqual(["published", "failed"]);
    expect(done.targets[1].error_code).toBe("auth_required");
    expect(texts(chatId)).toEqual(["everywhere"]);
  });

  test("a revoked bot token marks every account using that bot auth_required, not only the one published to", async () => {
    h.telegramEmulator.reset(); // the bot revoked by the test before works again
    const other = await h.profile({ name: "other" });
    const { accountId: first } = await h.telegram(profileId, "@crier_bot_a");
    const { accountId: second } = await h.telegram(profileId, "@crier_bot_b");
    const { accountId: elsewhere } = await h.telegram(other.profileId, "@crier_bot_c");
    const bsky = await h.bluesky(profileId, "unrelated.test");
    h.telegramEmulator.revokeToken(SANDBOX_BOT_TOKEN);
    const post = (await create({ content: "bot gone", targets: [{ account_id: first }] })).body.data;
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0].error_code).toBe("auth_required");
    const statusOf = async (token: string, id: string) =>
      (await h.request("GET", "/v1/accounts", { token })).body.data.find((a: { id: string }) => a.id === id).status;
    expect(await statusOf(token, first)).toBe("auth_required");
    expect(await statusOf(token, second)).toBe("auth_required");
    expect(await statusOf(other.token, elsewhere)).toBe("auth_required");
    expect(await statusOf(token, bsky)).toBe("active");
  });
});
