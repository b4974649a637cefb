/** Reddit specifics beyond the conformance suite: post kinds, json.errors, RATELIMIT waits, image and gallery uploads, comment threads. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import reddit, { jsonErrors, userAgent } from "../../plugins/reddit/index.ts";
import { createRedditEmulator, type RedditEmulator } from "../../plugins/reddit/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";

let emulator: RedditEmulator;
let rig: OAuthRig<RedditEmulator>;
let ctx: PluginContext;

beforeAll(async () => {
  ({ rig, emulator, ctx } = await connectOne(createRedditEmulator(), {
    authorizePath: "/api/v1/authorize",
    tokenPath: "/api/v1/access_token",
    media: () => new Response(new Uint8Array(64), { headers: { "content-type": "image/png" } }),
    mediaMaxBytes: 1024 * 1024,
    username: "sandbox_redditor",
    settings: { USERNAME: "crier_dev" },
  }));
});
afterAll(() => rig.stop());

const png = () => ({ url: `${rig.mediaUrl}/a.png`, type: "image" as const });
async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await reddit.checkStatus!(ctx, out.handle);
  return out;
}

test("RATELIMIT in json.errors waits the time Reddit names", () => {
  expect(
    jsonErrors({
      json: { errors: [["RATELIMIT", "you are doing that too much. try again in 9 minutes.", "ratelimit"]] },
    }),
  ).toEqual({
    kind: "retryable",
    reason: "Reddit: you are doing that too much. try again in 9 minutes.",
    retryAfterMs: 9 * 60_000,
  });
});

test("a bare URL is a link post; text is a self post; postType forces the kind", async () => {
  const link = await reddit.publish!(
    ctx,
    job("https://example.com/story", { options: { subreddit: "news", title: "A story" } }),
  );
  expect(link.kind).toBe("published");
  const self = await reddit.publish!(ctx, job("Title line\nand the body", { options: { subreddit: "crier" } }));
  if (self.kind !== "published") throw new Error(self.kind);
  expect(self.platformPostId).toStartWith("t3_");
  expect(emulator.posts().at(-1)!.text).toBe("Title line\nTitle line\nand the body");
});

test("subreddit rules come back as permanent failures with Reddit's code", async () => {
  expect(await reddit.publish!(ctx, job("hello", { options: { subreddit: "doesnoexist" } }))).toMatchObject({
    kind: "permanent",
    code: "SUBREDDIT_NOEXIST",
  });
  expect(
    await reddit.publish!(ctx, job("https://example.com", { options: { subreddit: "selfonly", title: "x" } })),
  ).toMatchObject({ kind: "permanent", code: "NO_LINKS" });
});

test("one image is found among the user's submissions; several are a gallery", async () => {
  const one = await settle(
    await reddit.publish!(ctx, job("Photo", { options: { subreddit: "pics" }, media: [png()] })),
  );
  if (one.kind !== "published") throw new Error(one.kind);
  expect(one.url).toContain("/r/pics/comments/");
  const many = await reddit.publish!(ctx, job("Album", { options: { subreddit: "pics" }, media: [png(), png()] }));
  expect(many.kind).toBe("published");
  expect(emulator.posts().at(-1)!.media).toHaveLength(2);
});

test("a thread continues as comments under the post", async () => {
  const post = await reddit.publish!(ctx, job("Thread start", { options: { subreddit: "crier" } }));
  if (post.kind !== "published") throw new Error(post.kind);
  const c1 = await reddit.publish!(
    ctx,
    job("second", { options: { subreddit: "crier" }, replyTo: { platformPostId: post.platformPostId } }),
  );
  if (c1.kind !== "published") throw new Error(c1.kind);
  expect(c1.platformPostId).toStartWith("t1_");
  const c2 = await reddit.publish!(
    ctx,
    job("third", {
      options: { subreddit: "crier" },
      replyTo: { platformPostId: c1.platformPostId, rootPlatformPostId: post.platformPostId },
    }),
  );
  expect(c2.kind).toBe("published");
  expect((await reddit.metrics!(ctx, [post.platformPostId]))[post.platformPostId]).toMatchObject({
    comments: 2,
    views: null,
  });
});

test("flair, NSFW, spoiler and inbox replies reach /api/submit and gallery posts; unset, replies stay on as on Reddit", async () => {
  const marks = {
    flair_id: "a1b2c3d4-0000-1111-2222-333344445555",
    flair_text: "Meta",
    nsfw: true,
    spoiler: true,
    send_replies: false,
  };
  const expected = { flair_id: marks.flair_id, flair_text: "Meta", nsfw: true, spoiler: true, sendreplies: false };
  expect(
    (await reddit.publish!(ctx, job("Marked self post", { options: { subreddit: "crier", ...marks } }))).kind,
  ).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({ subreddit: "crier", ...expected });
  expect(
    (
      await reddit.publish!(
        ctx,
        job("Marked album", { options: { subreddit: "pics", ...marks }, media: [png(), png()] }),
      )
    ).kind,
  ).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({ subreddit: "pics", ...expected });
  const one = await settle(
    await reddit.publish!(ctx, job("Marked photo", { options: { subreddit: "pics", ...marks }, media: [png()] })),
  );
  expect(one.kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({ subreddit: "pics", ...expected });

  expect((await reddit.publish!(ctx, job("Plain post", { options: { subreddit: "crier" } }))).kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({
    subreddit: "crier",
    flair_id: null,
    flair_text: null,
    nsfw: false,
    spoiler: false,
    sendreplies: true,
  });
});

test("the User-Agent is the one Reddit's rules ask for, built from this install's app id and developer", () => {
  expect(userAgent({ CLIENT_ID: "Ab12Cd", USERNAME: "crier_dev" })).toMatch(
    /^server:Ab12Cd:crier-\d+\.\d+\.\d+ \(by \/u\/crier_dev\)$/,
  );
  expect(userAgent({ CLIENT_ID: "x", USERNAME: "/u/someone" })).toEndWith("(by /u/someone)");
  expect(userAgent({ CLIENT_ID: "x", USERNAME: "y", USER_AGENT: "web:my.app:v2 (by /u/me)" })).toBe(
    "web:my.app:v2 (by /u/me)",
  );
});

test("Reddit's token endpoint throttles a default agent; the refresh grant carries the plugin's", async () => {
  const tokenUrl = `${rig.served.url}/api/v1/access_token`;
  const bare = await fetch(tokenUrl, {
    method: "POST",
    headers: { authorization: `Basic ${btoa("sandbox:sandbox")}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: String(ctx.credentials.refresh_token) }),
  });
  expect(bare.status).toBe(429);
  const fresh = await reddit.refresh!(ctx);
  expect(typeof fresh.access_token).toBe("string");
});

test("a comment over 10,000 characters is refused by Reddit, by the plugin, and at POST /v1/posts", async () => {
  const post = await reddit.publish!(ctx, job("Long thread", { options: { subreddit: "crier" } }));
  if (post.kind !== "published") throw new Error(post.kind);
  const long = "x".repeat(10_001);
  const direct = await fetch(`${rig.served.url}/api/comment`, {
    method: "POST",
    headers: { authorization: `Bearer ${String(ctx.credentials.access_token)}`, "user-agent": userAgent(ctx.settings) },
    body: new URLSearchParams({ api_type: "json", thing_id: post.platformPostId, text: long }),
  });
  expect(((await direct.json()) as { json: { errors: string[][] } }).json.errors[0][0]).toBe("TOO_LONG");
  const before = emulator.posts().length;
  expect(
    await reddit.publish!(
      ctx,
      job(long, { options: { subreddit: "crier" }, replyTo: { platformPostId: post.platformPostId } }),
    ),
  ).toMatchObject({ kind: "permanent", code: "content_too_long" });
  expect(emulator.posts().length).toBe(before);
  const accountId = rig.rows[0].id;
  const res = await rig.h.request("POST", "/v1/posts", {
    token: rig.token,
    body: {
      content: "Thread start",
      targets: [
        { account_id: accountId, platform_options: { subreddit: "crier" } },
        { account_id: accountId, content_override: long, platform_options: { subreddit: "crier" } },
      ],
    },
  });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("content_too_long");
  expect(res.body.error.message).toContain("at most 10000 in a reply");
});

test("an endpoint refuses a token without the scope reddit.com/dev/api lists for it", async () => {
  const ua = userAgent(ctx.settings);
  const consent = new URL(`${rig.served.url}/api/v1/authorize`);
  consent.search = new URLSearchParams({
    client_id: "sandbox",
    redirect_uri: "http://127.0.0.1/cb",
    scope: "identity read",
  }).toString();
  const code = new URL((await fetch(consent, { redirect: "manual" })).headers.get("location")!).searchParams.get(
    "code",
  )!;
  const granted = await fetch(`${rig.served.url}/api/v1/access_token`, {
    method: "POST",
    headers: { authorization: `Basic ${btoa("sandbox:sandbox")}`, "user-agent": ua },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "http://127.0.0.1/cb" }),
  });
  const token = ((await granted.json()) as { access_token: string }).access_token;
  const headers = { authorization: `Bearer ${token}`, "user-agent": ua };
  expect((await fetch(`${rig.served.url}/api/v1/me`, { headers })).status).toBe(200);
  const submit = await fetch(`${rig.served.url}/api/submit`, {
    method: "POST",
    headers,
    body: new URLSearchParams({ api_type: "json", sr: "crier", kind: "self", title: "t", text: "x" }),
  });
  expect(submit.status).toBe(403);
  expect(submit.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  expect((await fetch(`${rig.served.url}/user/sandbox_redditor/submitted`, { headers })).status).toBe(403);
});
