/** LinkedIn specifics beyond the conformance suite: little-text escaping, multi-image posts, video size bounds. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createMediaAccess } from "../../src/platform/media.ts";
import { providerFor } from "../../src/platform/provider.ts";
import type { PluginContext } from "../../src/platform/sdk.ts";
import linkedin, { escapeLittleText } from "../../plugins/linkedin/index.ts";
import { createLinkedInEmulator, type LinkedInEmulator } from "../../plugins/linkedin/emulator.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";

let emulator: LinkedInEmulator;
let served: ServedEmulator;
let media: ReturnType<typeof Bun.serve>;
let h: ListeningHarness;
let ctx: PluginContext;

beforeAll(async () => {
  emulator = createLinkedInEmulator();
  served = serveEmulator(emulator);
  media = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => new URL(req.url).pathname.endsWith(".png")
      ? new Response(new Uint8Array(100), { headers: { "content-type": "image/png" } })
      : new Response(new Uint8Array(1000), { headers: { "content-type": "video/mp4" } }),
  });
  h = await listeningHarness({
    CRIER_LINKEDIN_API_URL: served.url,
    CRIER_LINKEDIN_AUTHORIZE_URL: `${served.url}/oauth/authorize`,
    CRIER_LINKEDIN_TOKEN_URL: `${served.url}/oauth/v2/accessToken`,
    CRIER_LINKEDIN_CLIENT_ID: "sandbox",
    CRIER_LINKEDIN_CLIENT_SECRET: "sandbox",
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", "/v1/accounts/connect/linkedin", { token });
  expect((await followAuthorization(res.body.data.authorization_url)).html).toContain("Account connected");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  ctx = providerFor(h.ctx, row, { sandbox: false, media: createMediaAccess({ maxBytes: 1024 * 1024, allowAddress: () => true }) }).context;
});
afterAll(async () => {
  await h.stop();
  await served.stop();
  media.stop(true);
});

const job = (content: string, media: { url: string; type: "image" | "video" }[] = []) => ({ content, media, options: {}, idempotencyToken: crypto.randomUUID() });
const png = () => ({ url: `http://127.0.0.1:${media.port}/a.png`, type: "image" as const });

test("reserved little-text characters are escaped, so the post reads as written", async () => {
  expect(escapeLittleText("a (b) #c @d_e")).toBe("a \\(b\\) \\#c \\@d\\_e");
  const out = await linkedin.publish!(ctx, job("Launch (v2) #news @team [beta]"));
  expect(out.kind).toBe("published");
  expect(emulator.posts().at(-1)!.text).toBe("Launch (v2) #news @team [beta]");
});

test("several images go as one multiImage post", async () => {
  const out = await linkedin.publish!(ctx, job("three", [png(), png(), png()]));
  if (out.kind !== "published") throw new Error(out.kind);
  expect(out.platformPostId).toStartWith("urn:li:share:");
  expect(out.url).toBe(`https://www.linkedin.com/feed/update/${out.platformPostId}`);
  expect(emulator.posts().at(-1)!.media).toHaveLength(3);
});

test("a video under 75 KB is refused before uploading", async () => {
  expect(await linkedin.publish!(ctx, job("tiny", [{ url: `http://127.0.0.1:${media.port}/v.mp4`, type: "video" }]))).toMatchObject({ kind: "permanent", code: "media_size" });
});

test("metrics read likes and comments", async () => {
  const out = await linkedin.publish!(ctx, job("measured"));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { likes: 7, comments: 2 });
  expect((await linkedin.metrics!(ctx, [out.platformPostId]))[out.platformPostId]).toMatchObject({ likes: 7, comments: 2, views: null });
});
