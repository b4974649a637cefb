/**
 * media[].alt_text reaches every platform that takes one, in the place that platform reads it, and each
 * emulator checks it the way its platform does (its own limit, from the platform's documentation), even
 * when the creation check is bypassed. Real files: a JPEG made by sharp and an MP4 made by ffmpeg.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import type { Emulator, MediaItem, Outcome, Plugin, PluginContext } from "../../src/platform/sdk.ts";
import bluesky from "../../plugins/bluesky/index.ts";
import { createBlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import nostr from "../../plugins/nostr/index.ts";
import { createNostrEmulator } from "../../plugins/nostr/emulator.ts";
import { createXEmulator } from "../../plugins/twitter/emulator.ts";
import { createFacebookEmulator } from "../../plugins/facebook/emulator.ts";
import { createInstagramEmulator } from "../../plugins/instagram/emulator.ts";
import { createLinkedInEmulator } from "../../plugins/linkedin/emulator.ts";
import { createPinterestEmulator } from "../../plugins/pinterest/emulator.ts";
import { createThreadsEmulator } from "../../plugins/threads/emulator.ts";
import { job, oauthRig, rig, serveMedia, type OAuthRig } from "./support.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../support/connect-kit.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";

const registry = createRegistry();
const ALT = "A blue square: the test pattern of Crier's alt-text tests.";

let jpeg: Uint8Array<ArrayBuffer>;
let mp4: Uint8Array<ArrayBuffer>;
beforeAll(async () => {
  jpeg = await makeImage({ width: 640, height: 640, format: "jpeg" });
  mp4 = makeVideo({ width: 320, height: 240, seconds: 4 });
});

const media = (req: Request) => {
  const p = new URL(req.url).pathname;
  if (p.endsWith(".jpg")) return new Response(jpeg, { headers: { "content-type": "image/jpeg" } });
  if (p.endsWith(".mp4")) return new Response(mp4, { headers: { "content-type": "video/mp4" } });
  return new Response("gone", { status: 404 });
};

async function settle(plugin: Plugin, ctx: PluginContext, out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 20; i++) out = await plugin.checkStatus!(ctx, out.handle);
  return out;
}

/** The media of the emulator's newest post, as the platform stored them. */
const lastMedia = (e: Emulator) => e.posts!().at(-1)!.media;

const OAUTH: {
  platform: string;
  make: () => Emulator;
  authorizePath: string;
  tokenPath: string;
  /** The kinds of media that carry alt text there. */
  kinds: ("image" | "video")[];
  /** A text longer than the platform takes: the emulator refuses it even when Crier's check is bypassed. */
  tooLong?: string;
}[] = [
  {
    platform: "twitter",
    make: createXEmulator,
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/token",
    kinds: ["image"],
    tooLong: "x".repeat(1001),
  },
  {
    platform: "facebook",
    make: createFacebookEmulator,
    authorizePath: "/v24.0/dialog/oauth",
    tokenPath: "/v24.0/oauth/access_token",
    kinds: ["image"],
  },
  {
    platform: "instagram",
    make: createInstagramEmulator,
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/access_token",
    kinds: ["image"],
  },
  {
    platform: "linkedin",
    make: createLinkedInEmulator,
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    kinds: ["image"],
    tooLong: "x".repeat(4087),
  },
  {
    platform: "pinterest",
    make: createPinterestEmulator,
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/token",
    kinds: ["image", "video"],
    tooLong: "x".repeat(501),
  },
  {
    platform: "threads",
    make: createThreadsEmulator,
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/access_token",
    kinds: ["image", "video"],
  },
];

describe.each(OAUTH.map((c) => [c.platform, c] as const))("%s", (platform, c) => {
  const plugin = registry.get(platform)!;
  let r: OAuthRig<Emulator>;
  let ctx: PluginContext;
  beforeAll(async () => {
    r = await oauthRig(c.make(), { ...c, media, mediaMaxBytes: 10 * 1024 * 1024 });
    ctx = r.context(r.rows[0]);
  });
  afterAll(() => r.stop());
  const item = (kind: "image" | "video", alt?: string): MediaItem => ({
    url: `${r.mediaUrl}/file.${kind === "image" ? "jpg" : "mp4"}`,
    type: kind,
    ...(kind === "image" ? { width: 640, height: 640 } : { width: 320, height: 240, duration: 4 }),
    ...(alt !== undefined && { alt_text: alt }),
  });

  test("declares alt text per kind of media, as the accounts API shows it", () => {
    const d = registry.describe(platform)!;
    expect(d.capabilities.alt_text).toBe(true);
    for (const kind of ["image", "video"] as const)
      expect(d.media_requirements.alt_text![kind] !== null).toBe(c.kinds.includes(kind));
  });

  for (const kind of c.kinds)
    test(`the ${kind}'s alt text is stored with the published file`, async () => {
      const out = await settle(plugin, ctx, await plugin.publish!(ctx, job("described", { media: [item(kind, ALT)] })));
      expect(out.kind).toBe("published");
      expect(lastMedia(r.emulator)[0]).toMatchObject({ type: kind, alt: ALT });
    });

  test("without alt text the file goes out with none", async () => {
    const out = await settle(plugin, ctx, await plugin.publish!(ctx, job("plain", { media: [item("image")] })));
    expect(out.kind).toBe("published");
    expect(lastMedia(r.emulator)[0].alt).toBeUndefined();
  });

  if (c.tooLong)
    test("the platform itself refuses a longer alt text (the emulator's own rule)", async () => {
      const out = await settle(
        plugin,
        ctx,
        await plugin.publish!(ctx, job("too long", { media: [item("image", c.tooLong)] })),
      );
      expect(out.kind).toBe("permanent");
    });
});

describe("bluesky", () => {
  let r: ReturnType<typeof rig<ReturnType<typeof createBlueskyEmulator>>>;
  let ctx: PluginContext;
  let files: ReturnType<typeof serveMedia>;
  const url = (name: string) => files.url(name);
  beforeAll(async () => {
    files = serveMedia({
      "a.jpg": { type: "image/jpeg", bytes: jpeg },
      "v.mp4": { type: "video/mp4", bytes: mp4 },
    });
    r = rig(bluesky, createBlueskyEmulator(), { timeoutMs: 5000 });
    r.emulator.registerAccount({ handle: "alt.test", password: "abcd-efgh-ijkl-mnop", followers: 1 });
    const flow = bluesky.connect as Extract<NonNullable<typeof bluesky.connect>, { verify: unknown }>;
    const id = await flow.verify(r.connectContext(), { handle: "alt.test", app_password: "abcd-efgh-ijkl-mnop" });
    ctx = r.context({
      credentials: id.credentials,
      remoteId: id.remoteId,
      username: id.username,
      metadata: id.metadata,
    });
  });
  afterAll(async () => {
    await r.stop();
    files.stop();
  });

  test("an image's alt goes into app.bsky.embed.images, a video's into app.bsky.embed.video", async () => {
    const img = await settle(
      bluesky,
      ctx,
      await bluesky.publish!(ctx, job("photo", { media: [{ url: url("a.jpg"), type: "image", alt_text: ALT }] })),
    );
    expect(img.kind).toBe("published");
    expect(lastMedia(r.emulator)[0]).toMatchObject({ type: "image", alt: ALT });
    const vid = await settle(
      bluesky,
      ctx,
      await bluesky.publish!(ctx, job("clip", { media: [{ url: url("v.mp4"), type: "video", alt_text: ALT }] })),
    );
    expect(vid.kind).toBe("published");
    expect(lastMedia(r.emulator)[0]).toMatchObject({ type: "video", alt: ALT });
  });

  test("the PDS refuses a video alt of more than 1000 graphemes (app.bsky.embed.video)", async () => {
    const out = await settle(
      bluesky,
      ctx,
      await bluesky.publish!(
        ctx,
        job("long", { media: [{ url: url("v.mp4"), type: "video", alt_text: "é".repeat(1001) }] }),
      ),
    );
    expect(out.kind).toBe("permanent");
  });
});

describe("nostr", () => {
  let h: ListeningHarness;
  let served: ServedEmulator;
  const emulator = createNostrEmulator();
  let ctx: PluginContext;
  beforeAll(async () => {
    served = serveEmulator(emulator);
    h = await listeningHarness({ CRIER_NOSTR_API_URL: served.url, CRIER_NOSTR_TIMEOUT_MS: "2000" });
    const { token, profileId } = await h.profile();
    const res = await h.request("POST", "/v1/accounts/connect/nostr", { token });
    await submitHostedForm(res.body.data.hosted_url, { bunker: emulator.bunkerUri(served.url.replace(/^http/, "ws")) });
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
    ctx = providerFor(h.ctx, row, { sandbox: false }).context;
  });
  afterAll(async () => {
    await h.stop();
    await served.stop();
  });

  test("the alt text is the imeta tag's alt field (NIP-92)", async () => {
    const out = await nostr.publish!(
      ctx,
      job("look", { media: [{ url: "https://cdn.example.com/a.jpg", type: "image", alt_text: ALT }] }),
    );
    expect(out.kind).toBe("published");
    expect(lastMedia(emulator)[0]).toMatchObject({ type: "image", alt: ALT });
  });
});

test("the platforms without alt text say so, and declare no limit to check", () => {
  const none = ["farcaster", "google_business", "reddit", "snapchat", "telegram", "tiktok", "vimeo", "youtube"];
  for (const platform of none) {
    const d = registry.describe(platform)!;
    expect(`${platform}: ${d.capabilities.alt_text} ${d.media_requirements.alt_text}`).toBe(`${platform}: false null`);
  }
  const some = registry.list().filter((p) => !none.includes(p.platform));
  for (const p of some) expect(registry.describe(p.platform)!.capabilities.alt_text).toBe(true);
  expect(some.map((p): string => p.platform).sort()).toEqual(
    [
      "bluesky",
      "discord",
      "facebook",
      "instagram",
      "linkedin",
      "mastodon",
      "nostr",
      "pinterest",
      "slack",
      "threads",
      "twitter",
    ].sort(),
  );
});
