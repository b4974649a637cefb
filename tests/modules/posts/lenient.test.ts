/**
 * Prefer: handling=lenient (RFC 7240) on POST /v1/posts and /validate: each target gets what fits its
 * platform, says what was changed, and the platform receives exactly that. Without the header the same
 * bodies are the teaching 400s they always were. End to end on a sandbox profile over the emulators.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { graphemeCount, weightedLength } from "../../../src/platform/text.ts";
import { makeJpeg } from "../../support/media-fixtures.ts";
import { workflowHarness, type WorkflowHarness } from "../../support/workflow-kit.ts";

let h: WorkflowHarness;
let bsky: string;
let x: string;
let ig: string;
let images: { url: string; type: "image" }[];

beforeAll(async () => {
  h = await workflowHarness();
  bsky = await h.connect("bluesky", { handle: "lenient.test" });
  x = await h.connect("twitter");
  ig = await h.connect("instagram");
  images = Array.from({ length: 6 }, (_, i) => ({
    url: h.serveFile(makeJpeg(40 + i, 30), "image/jpeg"),
    type: "image",
  }));
});
afterAll(() => h.stop());

const LENIENT = { prefer: "handling=lenient" };
const words = (n: number, marker: string) => `${marker} ` + Array.from({ length: n }, (_, i) => `word${i}`).join(" ");
const create = (body: unknown, headers: Record<string, string> = {}) =>
  h.request("POST", "/v1/posts", { token: h.token, body, headers });

async function publish(id: string) {
  for (let i = 0; i < 6; i++) {
    await h.engine.runUntilIdle();
    h.clock.advance(11_000);
  }
  return (await h.request("GET", `/v1/posts/${id}`, { token: h.token })).body.data;
}

describe("without the preference", () => {
  test("text over the limit and too many images stay a 400 naming the target", async () => {
    const res = await create({
      content: words(80, "strict"),
      media: images.slice(0, 5),
      targets: [{ account_id: bsky }],
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("preference-applied")).toBeNull();
  });
});

describe("with Prefer: handling=lenient", () => {
  test("each target gets what fits, records the adjustments, and the platform receives exactly that", async () => {
    const text = `${words(80, "lenient-1")} ${Array.from({ length: 35 }, (_, i) => `#tag${i}`).join(" ")}`;
    const res = await create(
      { content: text, media: images, targets: [{ account_id: bsky }, { account_id: x }, { account_id: ig }] },
      LENIENT,
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("preference-applied")).toBe("handling=lenient");
    const [b, t, i] = res.body.data.targets;
    expect(b.adjustments.map((a: any) => a.code).sort()).toEqual([
      "content_truncated",
      "media_dropped",
      "media_dropped",
    ]);
    expect(b.adjustments.find((a: any) => a.code === "content_truncated").message).toContain(
      "Bluesky takes at most 300",
    );
    expect(t.adjustments.map((a: any) => a.code)).toContain("content_truncated");
    // Instagram takes the text and ten media, but not 35 hashtags.
    expect(i.adjustments.map((a: any) => a.code)).toEqual(["hashtags_removed"]);
    // The client's own fields are untouched: the fitted text is what the platform gets, not an override.
    expect(b.content_override).toBeNull();

    const post = await publish(res.body.data.id);
    expect(post.targets.map((t: any) => [t.status, t.error])).toEqual([
      ["published", null],
      ["published", null],
      ["published", null],
    ]);
    const [sent] = h
      .emulator("bluesky")
      .posts()
      .filter((p) => p.text.startsWith("lenient-1"));
    expect(graphemeCount(sent.text)).toBeLessThanOrEqual(300);
    expect(sent.text.endsWith("…")).toBe(true);
    expect(sent.text.slice(0, -1)).toMatch(/word\d+$/); // cut at a word boundary
    expect(sent.media).toHaveLength(4);
    const [tweet] = h
      .emulator("twitter")
      .posts()
      .filter((p) => p.text.startsWith("lenient-1"));
    expect(weightedLength(tweet.text)).toBeLessThanOrEqual(280);
    expect(tweet.media).toHaveLength(4);
    const [gram] = h
      .emulator("instagram")
      .posts()
      .filter((p) => p.text.startsWith("lenient-1"));
    expect(gram.text.match(/#tag\d+/g)).toHaveLength(30);
    expect(gram.text).toContain("#tag29");
    expect(gram.text).not.toContain("#tag30");
  });

  test("a target that cannot be made to fit is still a 400 (Instagram needs media)", async () => {
    const res = await create({ content: "no picture", targets: [{ account_id: ig }] }, LENIENT);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("targets[0]");
  });

  test("validate shows per target what it would get and the adjustments, and creates nothing", async () => {
    const before = (await h.request("GET", "/v1/posts?limit=100", { token: h.token })).body.data.length;
    const res = await h.request("POST", "/v1/posts/validate", {
      token: h.token,
      headers: LENIENT,
      body: { content: words(80, "lenient-v"), media: images, targets: [{ account_id: bsky }] },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("preference-applied")).toBe("handling=lenient");
    const [target] = res.body.data.targets;
    expect(res.body.data.ok).toBe(true);
    expect(target.media).toHaveLength(4);
    expect(target.text.length).toBeLessThanOrEqual(300);
    expect(target.adjustments.length).toBeGreaterThan(0);
    expect((await h.request("GET", "/v1/posts?limit=100", { token: h.token })).body.data.length).toBe(before);
  });

  test("handling=strict, or another preference, keeps the 400", async () => {
    for (const prefer of ["handling=strict", "respond-async", "handling=lenient-ish"]) {
      const res = await create({ content: words(80, "strict-2"), targets: [{ account_id: bsky }] }, { prefer });
      expect(res.status).toBe(400);
    }
  });

  test("a post created leniently stays lenient when edited, and its targets are fitted again", async () => {
    const later = new Date(h.clock.now().getTime() + 86_400_000).toISOString();
    const res = await create(
      { content: words(80, "lenient-edit"), publish_at: later, targets: [{ account_id: bsky }] },
      LENIENT,
    );
    const id = res.body.data.id;
    const patched = await h.request("PATCH", `/v1/posts/${id}`, {
      token: h.token,
      body: { content: words(120, "lenient-edit2") },
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get("preference-applied")).toBe("handling=lenient");
    expect(patched.body.data.targets[0].adjustments[0].message).toMatch(/cut from \d+/);
    const short = await h.request("PATCH", `/v1/posts/${id}`, { token: h.token, body: { content: "short now" } });
    expect(short.body.data.targets[0].adjustments).toEqual([]);
  });
});
