/**
 * The plugin conformance suite: every plugin with an emulator.ts goes through the same checks against
 * its emulator over real HTTP. Connect through the API and the hosted page or OAuth redirect (sandbox
 * profile, emulator served by the app itself under /sandbox/), publish text and each media kind it
 * claims, each failure class to its outcome, refresh, fetchRecent and metrics where declared; and the
 * same connect + publish for a regular profile whose CRIER_<PLATFORM>_API_URL points at the emulator.
 */
import { keyId } from "../../src/db/crypto.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { Capabilities, MediaRequirements } from "../../src/platform/declaration.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createMediaAccess } from "../../src/platform/host/media-guard.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import type { Emulator, FailureSpec, MediaItem, Outcome, Plugin, PluginContext } from "../../src/platform/sdk.ts";
import {
  followAuthorization,
  listeningHarness,
  submitHostedForm,
  type ListeningHarness,
} from "../support/connect-kit.ts";
import { makeJpeg, makePng } from "../support/media-fixtures.ts";
import { makeVideo } from "../support/media-files.ts";

const registry = createRegistry();
/**
 * A case that applies only to plugins declaring the feature: registered for them, absent (not skipped)
 * for the others, whose "does not declare it" is checked by the declaration tests instead.
 */
const testWhen = (applies: boolean) => (applies ? test : ((() => {}) as unknown as typeof test));
const withEmulator = registry.list().filter((p) => registry.hasEmulator(p.platform));

// Small but real files: a 1x1 PNG, a 1x1 JPEG, and a video every platform's emulator takes as the
// platform documents it: 540×960 (Snapchat's least, inside Pinterest's 1:2 and X's 1280×1024), 6 s
// (Snapchat's 5 s and Pinterest's 4 s at least), 30 fps, H.264 and AAC, about 230 KB (over LinkedIn's 75 KB).
const PNG = makePng(1, 1);
const JPEG = makeJpeg(1, 1, 0);
const MP4 = makeVideo({ width: 540, height: 960, seconds: 6, fps: 30 });

let mediaServer: ReturnType<typeof Bun.serve>;
let mediaBase: string;
beforeAll(() => {
  mediaServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/image.png") return new Response(PNG, { headers: { "content-type": "image/png" } });
      if (path === "/image.jpg") return new Response(JPEG, { headers: { "content-type": "image/jpeg" } });
      if (path === "/video.mp4") return new Response(MP4, { headers: { "content-type": "video/mp4" } });
      return new Response("missing", { status: 404 });
    },
  });
  mediaBase = `http://127.0.0.1:${mediaServer.port}`;
});
afterAll(() => mediaServer.stop(true));

// The media of these tests lives on loopback, which the real guard refuses; only here is it allowed.
const testMedia = () => createMediaAccess({ maxBytes: 50 * 1024 * 1024, allowAddress: () => true });

// The provider timeout of these tests: short enough that the timeout case stays quick, long enough that
// an ordinary call (Farcaster signs typed data, Nostr talks to a relay) finishes on a loaded CI machine.
const TIMEOUT_MS = 2_000;

/** Meta refreshes only a token at least a day old: the token just connected is aged past that first. */
const tokenAge = (emulator: Emulator) => emulator.advanceClock?.(25 * 3_600_000);

let job = 0;
/** The media kind a platform's default post takes when it requires media (Snapchat: a Spotlight video). */
const MINIMAL_MEDIA: Record<string, "image" | "video"> = { snapchat: "video" };
/** platform_options a platform requires on every target (Reddit: the subreddit). */
const REQUIRED_OPTIONS: Record<string, Record<string, unknown>> = { reddit: { subreddit: "crier" } };
let currentOptions: Record<string, unknown> = {};
/**
 * Connects that yield several accounts at once (a LinkedIn member and the company page the sandbox
 * member administers): how many, and which of them the suite drives (the one whose reads all answer).
 */
const SEVERAL_ACCOUNTS: Record<string, { count: number; driven: (remoteId: string) => boolean }> = {
  linkedin: { count: 2, driven: (id) => id.startsWith("urn:li:organization:") },
};
const textJob = (content: string) => ({
  content,
  media: [] as MediaItem[],
  options: currentOptions,
  idempotencyToken: `conf-${++job}`,
});

/** Runs publish, following a "submitted" outcome with checkStatus the way the engine would. */
async function publishAndSettle(plugin: Plugin, ctx: PluginContext, j: ReturnType<typeof textJob>): Promise<Outcome> {
  let outcome = await plugin.publish!(ctx, j);
  for (let i = 0; outcome.kind === "submitted" && i < 50; i++) {
    expect(typeof plugin.checkStatus).toBe("function");
    outcome = await plugin.checkStatus!(ctx, outcome.handle);
  }
  return outcome;
}

describe.each(withEmulator.map((p) => [p.platform, p] as const))("%s conformance", (platform, plugin) => {
  const caps = registry.describe(platform)!.capabilities;
  const mode = caps.connection_mode;
  beforeAll(() => {
    currentOptions = REQUIRED_OPTIONS[platform] ?? {};
  });
  const required = registry.describe(platform)!.media_requirements.required_media;
  // Functions: mediaBase is known only once the media server runs.
  const formats = registry.describe(platform)!.media_requirements.supported_formats;
  // A PNG where the platform takes it, else a JPEG (Instagram takes JPEG only).
  const image = (): MediaItem =>
    formats.includes("image/png")
      ? { url: `${mediaBase}/image.png`, type: "image", width: 1, height: 1 }
      : { url: `${mediaBase}/image.jpg`, type: "image", width: 1, height: 1 };
  const video = (): MediaItem => ({
    url: `${mediaBase}/video.mp4`,
    type: "video",
    width: 1080,
    height: 1920,
    duration: 3,
  });
  /** The smallest post the platform takes: text alone, or text with the one media item it requires. */
  const postJob = (content: string) => {
    const j = textJob(content);
    if (!required) return j;
    const kind =
      MINIMAL_MEDIA[platform] ?? (required.acceptedTypes.includes("image") && caps.images ? "image" : "video");
    return { ...j, media: [kind === "image" ? image() : video()] };
  };

  test("declaration is valid against the spec's Capabilities and MediaRequirements", () => {
    expect([...Value.Errors(Capabilities, caps)].map((e) => e.path)).toEqual([]);
    expect(
      [...Value.Errors(MediaRequirements, registry.describe(platform)!.media_requirements)].map((e) => e.path),
    ).toEqual([]);
    expect(typeof plugin.publish).toBe("function");
    expect(plugin.connect).toBeDefined();
  });

  describe("sandbox profile", () => {
    let h: ListeningHarness;
    let token: string;
    let emulator: Emulator;
    let ctx: PluginContext;

    beforeAll(async () => {
      // The media of these tests live on loopback, which the emulators' guarded download refuses too.
      h = await listeningHarness(
        { [`CRIER_${platform.toUpperCase()}_TIMEOUT_MS`]: String(TIMEOUT_MS) },
        {},
        { emulatorMediaAddress: () => true },
      );
      let profileId: string;
      ({ token, profileId } = await h.profile({ sandbox: true }));
      emulator = h.ctx.platforms.emulatorFor(platform, profileId)!;
    });
    afterAll(() => h.stop());

    async function connect() {
      const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ platform, mode });
      // An OAuth flow that asks something first (Mastodon: the server) starts on Crier's page.
      const page = res.body.data.authorization_url
        ? await followAuthorization(res.body.data.authorization_url)
        : await submitHostedForm(res.body.data.hosted_url);
      expect(page.html).toContain("Account connected");
      expect(page.status).toBe(200);
    }

    test("connects end to end through the API and the browser page", async () => {
      await connect();
      const list = await h.request("GET", "/v1/accounts", { token });
      expect(list.status).toBe(200);
      const several = SEVERAL_ACCOUNTS[platform];
      expect(list.body.data).toHaveLength(several?.count ?? 1);
      const rows = await Promise.all(
        list.body.data.map(
          async (a: { id: string }) => (await h.db.db.select().from(accounts).where(eq(accounts.id, a.id)))[0],
        ),
      );
      const driven = several ? rows.findIndex((r) => several.driven(r.remoteId)) : 0;
      expect(driven).toBeGreaterThanOrEqual(0);
      const account = list.body.data[driven];
      expect(account).toMatchObject({
        platform,
        status: "active",
        capabilities: caps,
        // The account's own limits where the platform has them per account (a Mastodon server's).
        media_requirements: (registry.describeAccount?.(platform, rows[driven].metadata) ??
          registry.describe(platform))!.media_requirements,
      });
      // Credentials are stored encrypted, never in clear.
      const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, account.id));
      expect(row.credentials).toStartWith(`v2.${keyId(h.ctx.config.secretKey)}.`);
      ctx = providerFor(h.ctx, row, { sandbox: true, media: testMedia() }).context;
    });

    test("connecting the same remote account again keeps one account", async () => {
      await connect();
      const list = await h.request("GET", "/v1/accounts", { token });
      expect(list.body.data).toHaveLength(SEVERAL_ACCOUNTS[platform]?.count ?? 1);
    });

    test("publishes text (with the media it requires, if any)", async () => {
      const before = emulator.posts().length;
      const outcome = await publishAndSettle(plugin, ctx, postJob(`conformance text ${platform}`));
      expect(outcome.kind).toBe("published");
      if (outcome.kind === "published") expect(outcome.platformPostId).toBeTruthy();
      expect(emulator.posts().length).toBe(before + 1);
      expect(emulator.posts().at(-1)!.text).toContain("conformance text");
    });

    testWhen(caps.images)("publishes an image", async () => {
      const outcome = await publishAndSettle(plugin, ctx, { ...textJob("with an image"), media: [image()] });
      expect(outcome.kind).toBe("published");
      // Platforms name their kinds differently (Telegram: photo); what counts is one non-video item.
      const media = emulator.posts().at(-1)!.media;
      expect(media).toHaveLength(1);
      expect(media[0].type).not.toBe("video");
    });

    testWhen(caps.video)("publishes a video", async () => {
      const outcome = await publishAndSettle(plugin, ctx, { ...textJob("with a video"), media: [video()] });
      expect(outcome.kind).toBe("published");
      expect(
        emulator
          .posts()
          .at(-1)!
          .media.map((m) => m.type),
      ).toContain("video");
    });

    const failures: [FailureSpec, Outcome["kind"]][] = [
      [{ kind: "rate_limit", retryAfterSeconds: 7 }, "retryable"],
      // A 5xx on an earlier step is retryable; on the creating call it is unknown (the post may exist)
      // unless the plugin marks that call idempotent. Either way the emulator's 5xx created nothing.
      [{ kind: "server_error" }, "retryable"],
      [{ kind: "auth_expired" }, "auth_expired"],
      // A timeout on the creating call is unknown; on an earlier step (an upload session) nothing exists
      // yet, so retryable is right too, and then no post may appear.
      [{ kind: "timeout", delayMs: TIMEOUT_MS * 2 }, "unknown"],
    ];
    test.each(failures.map(([spec, kind]) => [spec.kind, spec, kind] as const))(
      "failure %s maps to its outcome",
      async (_name, spec, kind) => {
        const before = emulator.posts().length;
        emulator.failNext(spec);
        const outcome = await plugin.publish!(ctx, postJob(`failure ${spec.kind}`));
        if (spec.kind === "timeout" && outcome.kind === "retryable") expect(emulator.posts().length).toBe(before);
        else if (spec.kind === "server_error") expect(["retryable", "unknown"]).toContain(outcome.kind);
        else expect(outcome.kind).toBe(kind);
        if (spec.kind === "rate_limit" && outcome.kind === "retryable") expect(outcome.retryAfterMs).toBeGreaterThan(0);
        // Only a timeout after the work was done may leave a post behind; the others created nothing.
        if (spec.kind !== "timeout") expect(emulator.posts().length).toBe(before);
        if (spec.kind === "auth_expired" && plugin.refresh) {
          tokenAge(emulator);
          await plugin.refresh(ctx);
          const again = await publishAndSettle(plugin, ctx, postJob("after refresh"));
          expect(again.kind).toBe("published");
        }
      },
    );

    testWhen(typeof plugin.refresh === "function")("refresh saves new credentials, encrypted", async () => {
      const accountId = ctx.account.id;
      const [before] = await h.db.db.select().from(accounts).where(eq(accounts.id, accountId));
      tokenAge(emulator);
      const fresh = await plugin.refresh!(ctx);
      expect(fresh).toBeTruthy();
      const [after] = await h.db.db.select().from(accounts).where(eq(accounts.id, accountId));
      expect(after.credentials).not.toBe(before.credentials);
      expect(after.credentials).toStartWith(`v2.${keyId(h.ctx.config.secretKey)}.`);
    });

    testWhen(typeof plugin.fetchRecent === "function")("fetchRecent returns what was published", async () => {
      const recent = await plugin.fetchRecent!(ctx, null);
      expect(recent.some((r) => r.content.includes("conformance text"))).toBe(true);
      // Every media item says whether it is the file a workflow can carry; the post's own page never is.
      for (const r of recent) {
        for (const m of r.media) {
          expect(typeof m.downloadable).toBe("boolean");
          if (m.url === r.url) expect(m.downloadable).toBe(false);
        }
      }
    });

    testWhen(typeof plugin.metrics === "function")("metrics answer for published posts", async () => {
      const recent = plugin.fetchRecent ? await plugin.fetchRecent(ctx, null) : [];
      const ids = recent.slice(0, 2).map((r) => r.platformPostId);
      const published = await publishAndSettle(plugin, ctx, postJob("for metrics"));
      if (published.kind === "published") ids.push(published.platformPostId);
      const m = await plugin.metrics!(ctx, ids);
      for (const id of ids) expect(m[id]).toBeDefined();
    });

    testWhen(typeof plugin.accountStats === "function")(
      "accountStats reads the audience the platform reports",
      async () => {
        expect(typeof emulator.setFollowers).toBe("function");
        emulator.setFollowers!(777);
        expect(await plugin.accountStats!(ctx)).toEqual({ followers: 777 });
      },
    );
  });

  describe("regular profile with CRIER_<PLATFORM>_API_URL pointing at the emulator", () => {
    let h: ListeningHarness;
    let served: ServedEmulator;
    let emulator: Emulator;

    beforeAll(async () => {
      emulator = registry.newEmulator(platform)!;
      served = serveEmulator(emulator);
      const prefix = `CRIER_${platform.toUpperCase()}_`;
      const env: Record<string, string> = { [`${prefix}API_URL`]: served.url };
      for (const [k, v] of Object.entries(emulator.sandboxSettings ?? {})) env[prefix + k] = v;
      for (const name of plugin.connect?.requiredSettings ?? []) env[prefix + name] ??= "conformance";
      if (mode === "oauth_authorization_url") {
        // The emulator's own authorization page and token endpoint stand in for the provider's.
        env[`${prefix}AUTHORIZE_URL`] = `${served.url}/oauth/authorize`;
        env[`${prefix}TOKEN_URL`] = `${served.url}/oauth/token`;
      }
      h = await listeningHarness(env);
    });
    afterAll(async () => {
      await h.stop();
      await served.stop();
    });

    test("connects through the browser and publishes text to the configured API", async () => {
      const { token, profileId } = await h.profile();
      const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
      expect(res.status).toBe(201);
      const page = res.body.data.authorization_url
        ? await followAuthorization(res.body.data.authorization_url)
        : await submitHostedForm(res.body.data.hosted_url);
      expect(page.html).toContain("Account connected");
      const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
      const { context } = providerFor(h.ctx, row, { sandbox: false, media: testMedia() });
      expect(context.http.baseUrl).toBe(served.url);
      const outcome = await publishAndSettle(plugin, context, postJob("through the API URL override"));
      expect(outcome.kind).toBe("published");
      expect(emulator.posts().at(-1)!.text).toContain("through the API URL override");
    });
  });
});

test("the suite covers every plugin that has an emulator", () => {
  expect(withEmulator.map((p) => p.platform).sort()).toEqual(
    registry
      .list()
      .filter((p) => registry.hasEmulator(p.platform))
      .map((p) => p.platform)
      .sort(),
  );
});
