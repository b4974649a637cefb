/**
 * PLATFORMS_DISABLED: an operator turns platforms off, and a client then never meets them: not in the
 * connect flow, not among the accounts, not as a target.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../../src/config.ts";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import { createHarness, type Harness } from "../../support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ platformsDisabled: ["telegram"] });
});
afterAll(() => h.close());

test("PLATFORMS_DISABLED takes ids separated by commas or spaces, and refuses an id Crier does not know", () => {
  const dir = () => mkdtempSync(join(tmpdir(), "crier-disabled-"));
  expect(loadConfig({ DATA_DIR: dir(), PLATFORMS_DISABLED: "discord, Slack  mastodon" }).platformsDisabled).toEqual([
    "discord",
    "slack",
    "mastodon",
  ]);
  expect(loadConfig({ DATA_DIR: dir() }).platformsDisabled).toEqual([]);
  expect(() => loadConfig({ DATA_DIR: dir(), PLATFORMS_DISABLED: "discord,myspace" })).toThrow(
    /PLATFORMS_DISABLED names "myspace"/,
  );
  expect(() => loadConfig({ DATA_DIR: dir(), PLATFORMS_DISABLED: "myspace" })).toThrow(ConfigError);
});

test("a disabled platform cannot be connected, its accounts are absent, and it is no target", async () => {
  const p = await h.profile();
  const base = { profileId: p.profileId, credentials: { token: "t" } };
  const bluesky = await upsertConnectedAccount(h.ctx, {
    ...base,
    platform: "bluesky",
    remoteId: "did:plc:on",
    username: "on.bsky.social",
  });
  const telegram = await upsertConnectedAccount(h.ctx, {
    ...base,
    platform: "telegram",
    remoteId: "-100777",
    username: "off_channel",
  });

  const connect = await h.request("POST", "/v1/accounts/connect/telegram", { token: p.token });
  expect(connect.status).toBe(404);
  expect(connect.body.error.code).toBe("unsupported_platform");

  const list = await h.request("GET", "/v1/accounts", { token: p.token });
  expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([bluesky.id]);
  expect((await h.request("DELETE", `/v1/accounts/${telegram.id}`, { token: p.token })).status).toBe(404);

  const post = await h.request("POST", "/v1/posts", {
    token: p.token,
    body: { content: "hello", targets: [{ account_id: telegram.id }] },
  });
  expect(post.status).toBe(400);
  expect((await h.request("GET", "/v1/posts", { token: p.token })).body.data).toHaveLength(0);
});
