import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// Each platform's declared limits are checked once, at POST /v1/posts, as the platform counts them; the
// plugins no longer check them again at publish time, so a refusal here is the only one there is.

let h: Harness;
let token: string;
let profileId: string;
const accounts: Record<string, string> = {};

const connect = async (platform: string) => {
  const row = await upsertConnectedAccount(h.ctx, {
    profileId,
    platform,
    remoteId: `${platform}-1`,
    username: `${platform}.test`,
    credentials: {},
  });
  accounts[platform] = row.id;
};

beforeAll(async () => {
  h = await postsHarness();
  ({ token, profileId } = await h.profile());
  for (const p of [
    "twitter",
    "bluesky",
    "farcaster",
    "snapchat",
    "telegram",
    "instagram",
    "tiktok",
    "youtube",
    "vimeo",
  ])
    await connect(p);
});
afterAll(() => h.close());

const create = (body: unknown) => h.request("POST", "/v1/posts", { token, body });
const postCount = async () => (await h.request("GET", "/v1/posts?limit=100", { token })).body.data.length as number;
const to = (platform: string, content: string, media: unknown[] = [], platform_options?: unknown) => ({
  content,
  media,
  targets: [{ account_id: accounts[platform], ...(platform_options !== undefined && { platform_options }) }],
});
const images = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `https://cdn.example.com/${i}.jpg` }));
const video = (name = "v") => ({ url: `https://cdn.example.com/${name}.mp4` });

/** Sends each body and expects a 400 with its code naming the target's platform; nothing is saved. */
async function refused(cases: [unknown, string][]) {
  const before = await postCount();
  for (const [body, code] of cases) {
    const res = await create(body);
    expect(`${code}: ${res.status} ${res.body.error?.code}`).toBe(`${code}: 400 ${code}`);
    expect(res.body.error.message).toMatch(/^targets\[0\] \(account [0-9a-f-]{36}, [a-z]+\)/);
    expect(res.body.error.hint).toBeTruthy();
  }
  expect(await postCount()).toBe(before);
}

describe("X counts weighted characters at creation (URLs 23, CJK and emoji 2)", () => {
  test("200 CJK characters weigh 400: 400 content_too_long", async () => {
    const res = await create(to("twitter", "日".repeat(200)));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("content_too_long");
    expect(res.body.error.message).toContain("400 weighted characters");
    expect(res.body.error.message).toContain("twitter");
  });

  test("140 CJK characters weigh exactly 280 and are accepted; 141 are not", async () => {
    const ok = await create(to("twitter", "日".repeat(140)));
    expect(ok.status).toBe(201);
    expect(ok.body.data.targets[0]).toMatchObject({ platform: "twitter", status: "pending" });
    await refused([[to("twitter", "日".repeat(141)), "content_too_long"]]);
  });

  test("a long URL weighs 23, so 350 characters with one can fit", async () => {
    const text = `${"a".repeat(250)} https://example.com/${"p".repeat(80)}`;
    expect([...text].length).toBeGreaterThan(280);
    expect((await create(to("twitter", text))).status).toBe(201);
    await refused([[to("twitter", `${"a".repeat(258)} https://example.com/x`), "content_too_long"]]);
  });
});

describe("each declared rule is refused at creation, where the plugins no longer check it", () => {
  test("content_too_long, counted in each platform's unit", async () => {
    await refused([
      // Bluesky: 150 family emoji are 150 graphemes but 3,750 bytes, over its 3,000-byte cap.
      [to("bluesky", "👨‍👩‍👧‍👦".repeat(150)), "content_too_long"],
      // Farcaster counts bytes: 513 × "é" is 1,026.
      [to("farcaster", "é".repeat(513)), "content_too_long"],
      [to("snapchat", "x".repeat(161), [video()]), "content_too_long"],
      [to("instagram", "x".repeat(2201), images(1)), "content_too_long"],
    ]);
    const bytesMessage = (await create(to("bluesky", "👨‍👩‍👧‍👦".repeat(150)))).body.error.message;
    expect(bytesMessage).toContain("3750 bytes");
    expect((await create(to("farcaster", "é".repeat(512)))).status).toBe(201);
  });

  test("too_many_media", async () => {
    await refused([
      [to("twitter", "five", images(5)), "too_many_media"],
      [to("telegram", "eleven", images(11)), "too_many_media"],
      [to("vimeo", "two", [video("a"), video("b")]), "too_many_media"],
    ]);
  });

  test("media_required", async () => {
    await refused([
      [to("tiktok", "words only"), "media_required"],
      [to("instagram", "words only"), "media_required"],
      [to("youtube", "a picture is not a video", images(1)), "media_required"],
    ]);
  });

  test("mixed_media_not_allowed", async () => {
    await refused([[to("twitter", "both", [...images(1), video()]), "mixed_media_not_allowed"]]);
  });

  test("hashtags and mentions (Instagram: 30 and 20)", async () => {
    const tags = (n: number) => Array.from({ length: n }, (_, i) => `#t${i}`).join(" ");
    const mentions = (n: number) => Array.from({ length: n }, (_, i) => `@u${i}`).join(" ");
    await refused([
      [to("instagram", tags(31), images(1)), "too_many_hashtags"],
      [to("instagram", mentions(21), images(1)), "too_many_mentions"],
    ]);
    expect((await create(to("instagram", `${tags(30)} ${mentions(20)}`, images(1)))).status).toBe(201);
  });
});

test("invalid_platform_options points at the platform's schema, and /openapi.json has it", async () => {
  await refused([[to("telegram", "x", [], { title: "no titles here" }), "invalid_platform_options"]]);
  const res = await create(to("telegram", "x", [], { title: "no titles here" }));
  expect(res.body.error.hint).toContain("components.schemas.TelegramOptions in /openapi.json");
  const spec = (await h.request("GET", "/openapi.json")).body;
  const schema = spec.components.schemas.TelegramOptions;
  expect(schema.additionalProperties).toBe(false);
  expect(Object.keys(schema.properties)).toEqual(
    expect.arrayContaining(["disable_notification", "protect_content", "disable_link_preview"]),
  );
});
