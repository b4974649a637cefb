import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { Capabilities, MediaRequirements, PLATFORMS } from "../../src/platform/declaration.ts";
import { createRegistry, pluginStatus } from "../../src/platform/host/registry.ts";
import { renderAnalyticsTable, renderPlatformTable } from "../../scripts/readme-table.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const registry = createRegistry();

const errorsOf = (schema: Parameters<typeof Value.Errors>[0], value: unknown) =>
  [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);

test("every platform of the spec has a plugin folder", () => {
  const present = registry.list().map((p) => p.platform as string);
  // Bluesky and Telegram are written in their own folders; they count once they land.
  const expected = PLATFORMS.filter((p) => !["bluesky", "telegram"].includes(p) || present.includes(p));
  expect(present.sort()).toEqual([...expected].sort());
});

describe.each(registry.list().map((p) => [p.platform, p] as const))("%s", (platform, plugin) => {
  const description = registry.describe(platform)!;

  test("capabilities and media_requirements validate against the spec's shapes", () => {
    expect(errorsOf(Capabilities, description.capabilities)).toEqual([]);
    expect(errorsOf(MediaRequirements, description.media_requirements)).toEqual([]);
  });

  test("the declaration is consistent with itself", () => {
    const caps = description.capabilities;
    const mr = description.media_requirements;
    expect(["oauth_authorization_url", "credential_form_url", "managed_signer", "remote_signer"]).toContain(
      caps.connection_mode,
    );
    if (!caps.images) expect(mr.file_constraints.maxImageFiles).toBe(0);
    if (!caps.video) expect(mr.file_constraints.maxVideoFiles).toBe(0);
    // A platform that takes no text-only post must say which media it requires.
    if (!caps.text) expect(mr.required_media).not.toBeNull();
    if (caps.threads) expect(caps.replies).toBe(true);
    // A workflow source is read with fetchRecent; a platform without it cannot be one.
    if (caps.source) expect(typeof plugin.fetchRecent).toBe("function");
    expect(plugin.textLimit.max).toBeGreaterThan(0);
    expect(() => new URL(plugin.defaultApiUrl)).not.toThrow();
    if (pluginStatus(plugin) === "implemented") expect(typeof plugin.publish).toBe("function");
    else expect(plugin.missing?.length ?? 0).toBeGreaterThan(0);
  });

  test("aspect_ratio has the one shape every platform shares, and each range is a range", () => {
    const ar = description.media_requirements.aspect_ratio;
    const ratio = (r: string) => {
      expect(r).toMatch(/^[0-9]+(\.[0-9]+)?:[0-9]+(\.[0-9]+)?$/);
      const [w, h] = r.split(":").map(Number);
      return w / h;
    };
    if (ar !== null) {
      // The keys the checks read, and nothing else at the top (a bare min or max would be ambiguous).
      expect(Object.keys(ar).filter((k) => !["image", "video", "recommended"].includes(k))).toEqual([]);
      for (const kind of ["image", "video"] as const) {
        const range = ar[kind];
        if (!range) continue;
        expect(Object.keys(range).filter((k) => k !== "min" && k !== "max")).toEqual([]);
        expect(range.min ?? range.max).toBeDefined();
        if (range.min && range.max) expect(ratio(range.min)).toBeLessThanOrEqual(ratio(range.max));
      }
      if (ar.recommended) ratio(ar.recommended);
    }
    const mr = description.media_requirements;
    const fc = mr.file_constraints;
    const ordered = (lo: number | null | undefined, hi: number | null | undefined) => {
      if (lo != null && hi != null) expect(lo).toBeLessThanOrEqual(hi);
    };
    ordered(mr.min_video_duration_seconds, mr.max_video_duration_seconds);
    ordered(fc.minFrameRate, fc.maxFrameRate);
    ordered(fc.minVideoWidth, fc.maxVideoWidth);
    ordered(fc.minVideoHeight, fc.maxVideoHeight);
    // A platform that takes no video declares no video rule.
    if (!description.capabilities.video) {
      expect(ar?.video).toBeUndefined();
      expect(mr.min_video_duration_seconds ?? mr.max_video_duration_seconds ?? fc.minFrameRate ?? null).toBeNull();
    }
  });

  test("OAuth platforms point at the provider's real HTTPS endpoints", () => {
    if (plugin.connect?.mode !== "oauth_authorization_url") return;
    // A flow that asks first (Mastodon) names the provider only once the user named their server.
    if (plugin.connect.ask) return expect(plugin.connect.ask.fields.length).toBeGreaterThan(0);
    const url = new URL(
      plugin.connect.authorizationUrl({ settings: { CLIENT_ID: "id", CLIENT_KEY: "id" } } as never, {
        state: "s",
        redirectUri: "https://crier.test/cb",
        codeVerifier: "v".repeat(43),
      }),
    );
    expect(url.protocol).toBe("https:");
    expect(url.searchParams.get("state")).toBe("s");
    expect(url.searchParams.get("redirect_uri")).toBe("https://crier.test/cb");
    expect(url.searchParams.get("response_type")).toBe("code");
    expect(plugin.connect.requiredSettings.length).toBeGreaterThan(0);
  });
});

describe("platform_options schemas", () => {
  const ok = (platform: string, options: unknown) => Value.Check(registry.get(platform)!.optionsSchema, options);

  test("Vimeo: title 1..128 and privacy_view enum", () => {
    expect(ok("vimeo", { title: "A film", privacy_view: "unlisted" })).toBe(true);
    expect(ok("vimeo", { title: "" })).toBe(false);
    expect(ok("vimeo", { title: "x".repeat(129) })).toBe(false);
    expect(ok("vimeo", { privacy_view: "friends" })).toBe(false);
  });

  test("Reddit: subreddit required, title, postType", () => {
    expect(ok("reddit", { subreddit: "typescript", title: "Hello", postType: "self" })).toBe(true);
    expect(ok("reddit", { title: "Hello" })).toBe(false);
    expect(ok("reddit", { subreddit: "r/x y" })).toBe(false);
  });

  test("Snapchat: placements of spotlight/public_story and an xx_XX locale; variants fan out", () => {
    expect(ok("snapchat", { placements: ["spotlight", "public_story"], locale: "fr_FR" })).toBe(true);
    expect(ok("snapchat", { placements: ["story"] })).toBe(false);
    expect(ok("snapchat", { placements: [] })).toBe(false);
    expect(ok("snapchat", { locale: "en-US" })).toBe(false);
    const snap = registry.get("snapchat")!;
    expect(snap.variants!({ placements: ["public_story", "spotlight"] })).toEqual(["public_story", "spotlight"]);
    expect(snap.variants!({})).toEqual(["spotlight"]);
  });

  test("Farcaster: channel_id and reply_to {hash, author_fid}", () => {
    expect(ok("farcaster", { channel_id: "dev", reply_to: { hash: "0x" + "a".repeat(40), author_fid: 3 } })).toBe(true);
    expect(ok("farcaster", { reply_to: null })).toBe(true);
    expect(ok("farcaster", { reply_to: { hash: "0x" + "a".repeat(40) } })).toBe(false);
    expect(ok("farcaster", { reply_to: { hash: "abc", author_fid: 3 } })).toBe(false);
  });

  test("TikTok: publish_mode direct or draft, video_cover_timestamp_ms >= 0, ai_generated", () => {
    expect(ok("tiktok", { publish_mode: "draft", video_cover_timestamp_ms: 1500, ai_generated: true })).toBe(true);
    // direct is the hosted service's name for the default (issue 12); anything else is refused.
    expect(ok("tiktok", { publish_mode: "direct" })).toBe(true);
    expect(ok("tiktok", { publish_mode: "inbox" })).toBe(false);
    expect(ok("tiktok", { video_cover_timestamp_ms: -1 })).toBe(false);
  });

  test("ai_generated is a boolean on TikTok, YouTube and Instagram", () => {
    for (const p of ["tiktok", "youtube", "instagram"]) {
      expect(ok(p, { ai_generated: true })).toBe(true);
      expect(ok(p, { ai_generated: "yes" })).toBe(false);
    }
  });

  test("elsewhere unknown keys are accepted (stored, not forwarded)", () => {
    for (const p of ["facebook", "linkedin", "threads", "twitter", "nostr", "pinterest"])
      expect(ok(p, { something: 1 })).toBe(true);
  });
});

test("disconnect rules: Farcaster and Nostr records are disabled; Farcaster needs remote revocation", () => {
  const fc = registry.describe("farcaster")!.disconnect!;
  expect(fc).toMatchObject({ disableRecord: true, providerRevocationRequired: true });
  expect(fc.providerRevocationUrl).toStartWith("https://");
  expect(registry.describe("nostr")!.disconnect).toMatchObject({ disableRecord: true });
});

test("the README's platform table matches the declarations (regenerate with bun scripts/platform-table.ts)", () => {
  const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");
  const start = readme.indexOf("\n", readme.indexOf("<!-- platform-table:start")) + 1;
  const end = readme.indexOf("<!-- platform-table:end -->");
  expect(readme.slice(start, end).trim()).toBe(renderPlatformTable(registry));
});

test("the README's analytics table matches the declarations (regenerate with bun scripts/analytics-table.ts)", () => {
  const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");
  const start = readme.indexOf("\n", readme.indexOf("<!-- analytics-table:start")) + 1;
  const end = readme.indexOf("<!-- analytics-table:end -->");
  expect(readme.slice(start, end).trim()).toBe(renderAnalyticsTable(registry));
});

test("a plugin with metrics declares which numbers it gives", () => {
  for (const p of registry.list().filter((x) => x.metrics)) expect(p.metricNames?.length ?? 0).toBeGreaterThan(0);
});
