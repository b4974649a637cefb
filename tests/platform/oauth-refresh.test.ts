/**
 * The SDK's refresh_token grant as the plugins use it, over real HTTP against the emulators: how a
 * refusal, a refusal Reddit-style (200 with an error field) and an unreachable token endpoint end.
 */
import { afterAll, expect, test } from "bun:test";
import reddit from "../../plugins/reddit/index.ts";
import { createRedditEmulator } from "../../plugins/reddit/emulator.ts";
import tiktok from "../../plugins/tiktok/index.ts";
import { createTikTokEmulator } from "../../plugins/tiktok/emulator.ts";
import { RefreshError } from "../../src/platform/sdk.ts";
import { rig } from "../plugins/support.ts";

const redditRig = rig(reddit, createRedditEmulator(), {
  settings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox", USERNAME: "crier_dev" },
});
const tiktokRig = rig(tiktok, createTikTokEmulator(), {
  settings: { CLIENT_KEY: "sandbox", CLIENT_SECRET: "sandbox" },
});
afterAll(async () => {
  await redditRig.stop();
  await tiktokRig.stop();
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a RefreshError");
    },
    (e) => e as RefreshError,
  );

test("an unknown refresh token answered with 200 and an error field is refused for good, nothing saved", async () => {
  const ctx = redditRig.context({
    credentials: { access_token: "old", refresh_token: "never-issued" },
    settings: { TOKEN_URL: `${redditRig.served.url}/api/v1/access_token` },
  });
  const e = await refusal(reddit.refresh!(ctx));
  expect(e).toBeInstanceOf(RefreshError);
  expect(e.retryable).toBe(false);
  expect(e.message).toContain("Reddit refused to refresh the token (reconnect the account)");
  expect(ctx.saved).toEqual([]);
});

test("an unknown refresh token answered with 400 is refused for good with the platform's reason", async () => {
  const ctx = tiktokRig.context({
    credentials: { access_token: "old", refresh_token: "never-issued" },
    settings: { TOKEN_URL: `${tiktokRig.served.url}/v2/oauth/token/` },
  });
  const e = await refusal(tiktok.refresh!(ctx));
  expect(e.retryable).toBe(false);
  expect(e.message).toContain("TikTok refused to refresh the token (reconnect the account)");
});

test("no stored refresh token asks for a reconnect without calling the platform", async () => {
  const ctx = tiktokRig.context({ credentials: { access_token: "old" } });
  const e = await refusal(tiktok.refresh!(ctx));
  expect(e.retryable).toBe(false);
  expect(e.message).toContain("no refresh token is stored for this TikTok account");
});

test("a token endpoint that cannot be reached is retryable", async () => {
  const down = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null) });
  const url = `http://127.0.0.1:${down.port}/token`;
  await down.stop(true);
  const ctx = tiktokRig.context({
    credentials: { access_token: "old", refresh_token: "x" },
    settings: { TOKEN_URL: url },
  });
  const e = await refusal(tiktok.refresh!(ctx));
  expect(e.retryable).toBe(true);
  expect(e.message).toContain("TikTok could not refresh the token now");
});
