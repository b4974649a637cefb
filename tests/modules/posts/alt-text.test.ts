import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// media[].alt_text at creation: kept with the post, checked against each target's declared limit (a 400
// naming the target, the file and the limit), and ignored, not refused, where the platform has no alt text.

let h: Harness;
let token: string;
let profileId: string;
const accounts: Record<string, string> = {};

beforeAll(async () => {
  h = await postsHarness();
  ({ token, profileId } = await h.profile());
  for (const platform of ["twitter", "bluesky", "pinterest", "linkedin", "telegram", "threads"]) {
    const row = await upsertConnectedAccount(h.ctx, {
      profileId,
      platform,
      remoteId: `${platform}-1`,
      username: `${platform}.test`,
      credentials: {},
    });
    accounts[platform] = row.id;
  }
});
afterAll(() => h.close());

const create = (body: unknown) => h.request("POST", "/v1/posts", { token, body });
const postCount = async () => (await h.request("GET", "/v1/posts?limit=100", { token })).body.data.length as number;
const later = () => new Date(h.clock.now().getTime() + 3600_000).toISOString();
const image = (alt_text?: string) => ({
  url: "https://cdn.example.com/photo.jpg",
  ...(alt_text !== undefined && { alt_text }),
});
const video = (alt_text?: string) => ({
  url: "https://cdn.example.com/clip.mp4",
  ...(alt_text !== undefined && { alt_text }),
});
const to = (platform: string, media: unknown[]) => ({
  content: "described",
  media,
  publish_at: later(),
  targets: [{ account_id: accounts[platform] }],
});

describe("each account says where alt text goes", () => {
  test("capabilities.alt_text and media_requirements.alt_text, per platform", async () => {
    const res = await h.request("GET", "/v1/accounts", { token });
    expect(res.status).toBe(200);
    const by = Object.fromEntries(res.body.data.map((a: any) => [a.platform, a]));
    expect(by.twitter.capabilities.alt_text).toBe(true);
    expect(by.twitter.media_requirements.alt_text).toEqual({
      image: { max_length: 1000, unit: "characters" },
      video: null,
    });
    expect(by.bluesky.media_requirements.alt_text.video).toEqual({ max_length: 1000, unit: "graphemes" });
    expect(by.telegram.capabilities.alt_text).toBe(false);
    expect(by.telegram.media_requirements.alt_text).toBeNull();
  });
});

describe("POST /v1/posts", () => {
  test("an alt text over the platform's limit is 400 alt_text_too_long naming the target, the file and the limit", async () => {
    const before = await postCount();
    const cases: [string, unknown[], string][] = [
      [
        "twitter",
        [image("ok"), image("x".repeat(1001))],
        "media[1].alt_text is 1001 characters long; X (Twitter) takes at most 1000.",
      ],
      ["pinterest", [image("p".repeat(501))], "at most 500"],
      ["linkedin", [image("l".repeat(4087))], "at most 4086"],
      // Bluesky counts graphemes: 1001 accented letters written with a combining mark are 2002 code points.
      ["bluesky", [video("e\u0301".repeat(1001))], "1001 graphemes long; Bluesky takes at most 1000"],
    ];
    for (const [platform, media, says] of cases) {
      const res = await create(to(platform, media));
      expect(`${platform}: ${res.status} ${res.body.error?.code}`).toBe(`${platform}: 400 alt_text_too_long`);
      expect(res.body.error.message).toStartWith(`targets[0] (account ${accounts[platform]}, ${platform})`);
      expect(res.body.error.message).toContain(says);
      expect(res.body.error.hint).toContain("alt_text");
    }
    expect(await postCount()).toBe(before);
  });

  test("at the limit it is accepted, counted as the platform counts (X: 1000 characters, emoji included)", async () => {
    const res = await create(to("twitter", [image("🙂".repeat(1000))]));
    expect(res.status).toBe(201);
  });

  test("a platform without alt text, or a kind of media that carries none there, ignores it", async () => {
    const long = "t".repeat(5000);
    const tg = await create(to("telegram", [image(long)]));
    expect(tg.status).toBe(201);
    // X takes alt text on images only: a video's is not sent, so its length is not X's concern.
    const x = await create(to("twitter", [video(long)]));
    expect(x.status).toBe(201);
  });

  test("the alt text is kept with the post: GET returns it, a PATCH of other fields keeps it", async () => {
    const created = await create({
      ...to("threads", [image("A harbour at dawn"), video("Waves on the pier")]),
      targets: [{ account_id: accounts.threads }, { account_id: accounts.telegram }],
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const got = await h.request("GET", `/v1/posts/${id}`, { token });
    expect(got.body.data.media.map((m: any) => m.alt_text)).toEqual(["A harbour at dawn", "Waves on the pier"]);
    const patched = await h.request("PATCH", `/v1/posts/${id}`, { token, body: { content: "edited" } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.media.map((m: any) => m.alt_text)).toEqual(["A harbour at dawn", "Waves on the pier"]);
    // A PATCH of the media is checked again, like a create.
    const tooLong = await h.request("PATCH", `/v1/posts/${id}`, {
      token,
      body: { targets: [{ account_id: accounts.twitter }], media: [image("x".repeat(1001))] },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.code).toBe("alt_text_too_long");
    const after = await h.request("GET", `/v1/posts/${id}`, { token });
    expect(after.body.data.media.map((m: any) => m.alt_text)).toEqual(["A harbour at dawn", "Waves on the pier"]);
  });

  test("alt_text must be a string", async () => {
    const res = await create(to("twitter", [{ url: "https://cdn.example.com/photo.jpg", alt_text: 5 }]));
    expect(res.status).toBe(400);
  });
});

describe("POST /v1/posts/validate", () => {
  test("lists the problem under the target with its field", async () => {
    const res = await h.request("POST", "/v1/posts/validate", {
      token,
      body: {
        content: "check",
        media: [image("y".repeat(1001))],
        targets: [{ account_id: accounts.twitter }, { account_id: accounts.telegram }],
      },
    });
    expect(res.status).toBe(200);
    const [x, tg] = res.body.data.targets;
    expect(x.problems.map((p: any) => [p.code, p.field])).toEqual([["alt_text_too_long", "media[0].alt_text"]]);
    expect(tg.ok).toBe(true);
    expect(tg.media[0].alt_text).toBe("y".repeat(1001));
  });
});
