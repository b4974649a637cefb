/**
 * The platform_options names the hosted service documents, accepted beside Crier's own: rewritten for the
 * plugin by the host, and refused (400) when both names are sent and disagree.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { optionsForPlugin } from "../../src/platform/host/options.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import type { Harness } from "../support/harness.ts";
import { postsHarness } from "../support/posts-kit.ts";

const registry = createRegistry();
const plugin = (p: string) => registry.get(p)!;

describe("aliases as the plugin receives them", () => {
  test.each([
    ["youtube", { privacy: "unlisted" }, { privacy_status: "unlisted" }],
    ["youtube", { privacy: "private", description: "d" }, { privacy_status: "private", description: "d" }],
    ["tiktok", { privacy: "private" }, { privacy_level: "SELF_ONLY" }],
    [
      "tiktok",
      { privacy: "followers", publish_mode: "direct" },
      { privacy_level: "FOLLOWER_OF_CREATOR", publish_mode: "direct" },
    ],
    ["tiktok", { privacy: "MUTUAL_FOLLOW_FRIENDS" }, { privacy_level: "MUTUAL_FOLLOW_FRIENDS" }],
    [
      "pinterest",
      { boardId: "549755885175", link: "https://example.com" },
      { board_id: "549755885175", link: "https://example.com" },
    ],
    ["pinterest", { board_id: "549755885175", boardId: "549755885175" }, { board_id: "549755885175" }],
  ] as const)("%s %j → %j", (platform, given, expected) => {
    expect(optionsForPlugin(plugin(platform), { ...given })).toEqual(expected);
  });

  test("each alias is documented in its plugin's options schema", () => {
    for (const [platform, alias] of [
      ["youtube", "privacy"],
      ["youtube", "description"],
      ["tiktok", "privacy"],
      ["pinterest", "boardId"],
      ["pinterest", "link"],
    ]) {
      const schema = plugin(platform).optionsSchema as unknown as {
        properties: Record<string, { description?: string }>;
      };
      expect(`${platform}.${alias}: ${schema.properties[alias]?.description ? "documented" : "missing"}`).toBe(
        `${platform}.${alias}: documented`,
      );
    }
    const mode = (plugin("tiktok").optionsSchema as any).properties.publish_mode;
    expect(JSON.stringify(mode)).toContain('"direct"');
  });
});

describe("through POST /v1/posts", () => {
  let h: Harness;
  let token: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    h = await postsHarness();
    const p = await h.profile();
    token = p.token;
    for (const platform of ["youtube", "tiktok", "pinterest"])
      ids[platform] = (
        await upsertConnectedAccount(h.ctx, {
          profileId: p.profileId,
          platform,
          remoteId: `${platform}-1`,
          username: `${platform}.user`,
          credentials: { access_token: "a", refresh_token: "r" },
        })
      ).id;
  });
  afterAll(() => h.close());
  const video = [{ url: "https://cdn.example.com/v.mp4", duration: 30 }];
  const image = [{ url: "https://cdn.example.com/a.jpg" }];

  test.each([
    ["youtube", video, { privacy: "unlisted" }],
    ["tiktok", video, { publish_mode: "direct", privacy: "public" }],
    ["tiktok", video, { publish_mode: "draft" }],
    ["pinterest", image, { boardId: "549755885175", link: "https://example.com" }],
  ] as const)("%s accepts %j", async (platform, media, options) => {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "x", media, targets: [{ account_id: ids[platform], platform_options: options }] },
    });
    expect(res.status).toBe(201);
    // Stored as sent; the plugin receives the rewritten names at publish time.
    expect(res.body.data.targets[0].platform_options).toEqual(options);
  });

  test.each([
    ["youtube", video, { privacy: "unlisted", privacy_status: "public" }, "privacy"],
    ["tiktok", video, { privacy: "private", privacy_level: "PUBLIC_TO_EVERYONE" }, "privacy"],
    ["pinterest", image, { boardId: "549755885175", board_id: "549755885176" }, "boardId"],
  ] as const)("%s refuses %j: the two names disagree", async (platform, media, options, alias) => {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "x", media, targets: [{ account_id: ids[platform], platform_options: options }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_platform_options");
    expect(res.body.error.message).toContain(`platform_options.${alias}`);
  });
});
