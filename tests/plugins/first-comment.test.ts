/**
 * First comments of the platforms that take one as a comment under the post (Facebook, Instagram,
 * LinkedIn, YouTube), each over its emulator on 127.0.0.1: an account connected the way a user connects
 * publishes a post, then its first comment; the same checks run for every platform, so their emulators
 * answer alike (exactly one comment under the parent, `failNext({ on: "comments" })`, refusals).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CommentJob, Emulator, Outcome, Plugin, PluginContext } from "../../src/platform/sdk.ts";
import facebook from "../../plugins/facebook/index.ts";
import instagram from "../../plugins/instagram/index.ts";
import linkedin from "../../plugins/linkedin/index.ts";
import youtube from "../../plugins/youtube/index.ts";
import { createFacebookEmulator } from "../../plugins/facebook/emulator.ts";
import { createInstagramEmulator } from "../../plugins/instagram/emulator.ts";
import { createLinkedInEmulator } from "../../plugins/linkedin/emulator.ts";
import { createYouTubeEmulator } from "../../plugins/youtube/emulator.ts";
import { connectOne, job, oauthRig, rig as plainRig } from "./support.ts";
import { fakeMp4, makePng } from "../support/media-fixtures.ts";
import { makeImage } from "../support/media-files.ts";

type Parent = CommentJob["parent"];

interface Setup {
  plugin: Plugin;
  emulator: Emulator;
  /** The connected account, as the engine would build its context. */
  ctx: PluginContext;
  /** Publishes a post of the account and returns it as a comment's parent. */
  post(text: string): Promise<Parent>;
  /** An account whose token lacks the comment permission, and a post it can see. */
  lacking(): Promise<{ ctx: PluginContext; parent: Parent }>;
  /** Words of the platform's refusal of a token without the comment permission. */
  refusal: string;
  /** An id the platform has no post under. */
  unknownParent: string;
  stop(): Promise<void>;
}

const REDIRECT = "http://127.0.0.1:9/callback";

/** A consent on the emulator's own authorization page for exactly `scope`: the code it redirects with. */
async function consent(base: string, path: string, scope: string): Promise<string> {
  const u = new URL(`${base}${path}`);
  for (const [k, v] of Object.entries({ client_id: "sandbox", redirect_uri: REDIRECT, scope, state: "s" }))
    u.searchParams.set(k, v);
  const res = await fetch(u, { redirect: "manual" });
  const code = new URL(res.headers.get("location") ?? "http://x/").searchParams.get("code");
  if (!code) throw new Error(`no code from ${path}: ${res.status}`);
  return code;
}

/** The authorization_code grant at a form token endpoint (Instagram, LinkedIn, Google). */
async function tokenFor(base: string, path: string, code: string): Promise<Record<string, unknown>> {
  const form = {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    client_id: "sandbox",
    client_secret: "sandbox",
  };
  const res = await fetch(`${base}${path}`, { method: "POST", body: new URLSearchParams(form) });
  if (!res.ok) throw new Error(`token ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

async function settle(plugin: Plugin, ctx: PluginContext, out: Outcome): Promise<Parent> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await plugin.checkStatus!(ctx, out.handle);
  if (out.kind !== "published") throw new Error(`the post was not published: ${JSON.stringify(out)}`);
  return { platformPostId: out.platformPostId, url: out.url };
}

async function facebookSetup(): Promise<Setup> {
  const png = makePng(2, 2);
  const emulator = createFacebookEmulator();
  const r = await oauthRig(emulator, {
    authorizePath: "/v24.0/dialog/oauth",
    tokenPath: "/v24.0/oauth/access_token",
    media: () => new Response(png, { headers: { "content-type": "image/png" } }),
  });
  const ctx = r.context(r.rows[0]);
  const post = async (text: string) => settle(facebook, ctx, await facebook.publish!(ctx, job(text)));
  return {
    plugin: facebook,
    emulator,
    ctx,
    post,
    // Page tokens are per Page in the emulator: a user granting less gets a Page of another Facebook.
    async lacking() {
      const other = plainRig(facebook, createFacebookEmulator());
      const base = other.served.url;
      const code = await consent(
        base,
        "/v24.0/dialog/oauth",
        "pages_show_list,pages_manage_posts,pages_read_engagement",
      );
      const q = new URLSearchParams({ client_id: "sandbox", client_secret: "sandbox", code, redirect_uri: REDIRECT });
      const user = (await (await fetch(`${base}/v24.0/oauth/access_token?${q}`)).json()) as { access_token: string };
      const pages = (await (await fetch(`${base}/v24.0/me/accounts?access_token=${user.access_token}`)).json()) as {
        data: { id: string; access_token: string }[];
      };
      const lctx = other.context({
        credentials: { page_access_token: pages.data[0].access_token },
        remoteId: pages.data[0].id,
      });
      stops.push(() => other.stop());
      return { ctx: lctx, parent: await settle(facebook, lctx, await facebook.publish!(lctx, job("no comments"))) };
    },
    refusal: "pages_manage_engagement",
    unknownParent: "100000000000001_100000000000002",
    stop: () => r.stop(),
  };
}

async function instagramSetup(): Promise<Setup> {
  const jpg = await makeImage({ width: 400, height: 400 });
  const {
    rig: r,
    emulator,
    ctx,
  } = await connectOne(createInstagramEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/access_token",
    media: () => new Response(jpg, { headers: { "content-type": "image/jpeg" } }),
    username: "sandbox.insta",
  });
  const post = async (text: string) =>
    settle(
      instagram,
      ctx,
      await instagram.publish!(ctx, job(text, { media: [{ url: `${r.mediaUrl}/a.jpg`, type: "image" }] })),
    );
  return {
    plugin: instagram,
    emulator,
    ctx,
    post,
    async lacking() {
      const code = await consent(
        r.served.url,
        "/oauth/authorize",
        "instagram_business_basic,instagram_business_content_publish",
      );
      const token = await tokenFor(r.served.url, "/oauth/access_token", code);
      const other = plainRig(instagram, emulator);
      stops.push(() => other.stop());
      const lctx = other.context({
        credentials: { access_token: token.access_token },
        remoteId: ctx.account.remoteId,
        username: ctx.account.username,
      });
      return { ctx: lctx, parent: await post("no comments") };
    },
    refusal: "instagram_business_manage_comments",
    unknownParent: "17999999999999999",
    stop: () => r.stop(),
  };
}

async function linkedinSetup(): Promise<Setup> {
  const {
    rig: r,
    emulator,
    ctx,
  } = await connectOne(createLinkedInEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    media: () => new Response("no media", { status: 404 }),
    // Reading comments back needs r_member_social, which LinkedIn grants to approved developers only.
    settings: { EXTRA_SCOPES: "r_member_social" },
  });
  const post = async (text: string) => settle(linkedin, ctx, await linkedin.publish!(ctx, job(text)));
  return {
    plugin: linkedin,
    emulator,
    ctx,
    post,
    async lacking() {
      const code = await consent(r.served.url, "/oauth/authorize", "openid profile");
      const token = await tokenFor(r.served.url, "/oauth/v2/accessToken", code);
      const other = plainRig(linkedin, emulator);
      stops.push(() => other.stop());
      const lctx = other.context({
        credentials: { access_token: token.access_token, author_urn: ctx.credentials.author_urn },
        remoteId: ctx.account.remoteId,
      });
      return { ctx: lctx, parent: await post("no comments") };
    },
    refusal: "Not enough permissions",
    unknownParent: "urn:li:share:1",
    stop: () => r.stop(),
  };
}

async function youtubeSetup(): Promise<Setup> {
  const mp4 = fakeMp4(4096);
  const {
    rig: r,
    emulator,
    ctx,
  } = await connectOne(createYouTubeEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/token",
    media: () => new Response(mp4, { headers: { "content-type": "video/mp4" } }),
    mediaMaxBytes: 1024 * 1024,
    username: "@sandboxtube",
  });
  const post = async (text: string) =>
    settle(
      youtube,
      ctx,
      await youtube.publish!(ctx, job(text, { media: [{ url: `${r.mediaUrl}/v.mp4`, type: "video", duration: 600 }] })),
    );
  return {
    plugin: youtube,
    emulator,
    ctx,
    post,
    async lacking() {
      // The user unticks force-ssl on Google's consent screen: uploads work, comments do not.
      const yt = "https://www.googleapis.com/auth/";
      const code = await consent(r.served.url, "/oauth/authorize", `${yt}youtube.upload ${yt}youtube.readonly`);
      const token = await tokenFor(r.served.url, "/token", code);
      const other = plainRig(youtube, emulator);
      stops.push(() => other.stop());
      const lctx = other.context({ credentials: { access_token: token.access_token }, remoteId: ctx.account.remoteId });
      return { ctx: lctx, parent: await post("no comments") };
    },
    refusal: "insufficient authentication scopes",
    unknownParent: "aaaaaaaaaaa",
    stop: () => r.stop(),
  };
}

const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

const comment = (parent: Parent, text: string): CommentJob => ({
  text,
  parent,
  options: {},
  idempotencyToken: crypto.randomUUID(),
});

for (const [name, start] of [
  ["facebook", facebookSetup],
  ["instagram", instagramSetup],
  ["linkedin", linkedinSetup],
  ["youtube", youtubeSetup],
] as const) {
  describe(name, () => {
    let s: Setup;
    beforeAll(async () => {
      s = await start();
    });
    afterAll(() => s.stop());

    const fc = () => s.plugin.firstComment!;
    const under = (parent: Parent) => s.emulator.posts().filter((p) => p.replyTo === parent.platformPostId);
    const window = (since: Date) => ({ since, until: new Date() });

    test("declares a comment under the post, with the comment's own limit", () => {
      expect(fc().kind).toBe("comment");
      expect(fc().textLimit.max).toBeGreaterThan(0);
    });

    test("the first comment is published once under the post, and find finds it in its window", async () => {
      const parent = await s.post(`a post with a first comment on ${name}`);
      const since = new Date();
      const out = await fc().publish(s.ctx, comment(parent, "First! Links and #tags go here."));
      if (out.kind !== "published") throw new Error(JSON.stringify(out));
      const made = under(parent);
      expect(made).toHaveLength(1);
      expect(made[0]).toMatchObject({ id: out.platformPostId, text: "First! Links and #tags go here." });
      expect(await fc().find!(s.ctx, comment(parent, "First! Links and #tags go here."), window(since))).toMatchObject({
        kind: "found",
        platformPostId: out.platformPostId,
      });
      expect(await fc().find!(s.ctx, comment(parent, "another text"), window(since))).toMatchObject({ kind: "absent" });
    });

    test("a server error on the comment call is unknown; nothing was made, and find says absent", async () => {
      const parent = await s.post("a post whose comment fails");
      const since = new Date();
      s.emulator.failNext({ kind: "server_error", on: "comments" });
      expect((await fc().publish(s.ctx, comment(parent, "lost"))).kind).toBe("unknown");
      expect(under(parent)).toHaveLength(0);
      expect((await fc().find!(s.ctx, comment(parent, "lost"), window(since))).kind).toBe("absent");
    });

    test("a server error after the comment was made is unknown, and find finds the comment", async () => {
      const parent = await s.post("a post whose comment is made before the error");
      const since = new Date();
      s.emulator.failNext({ kind: "server_error", on: "comments", afterWork: true });
      expect((await fc().publish(s.ctx, comment(parent, "made anyway"))).kind).toBe("unknown");
      expect(under(parent)).toHaveLength(1);
      expect(await fc().find!(s.ctx, comment(parent, "made anyway"), window(since))).toMatchObject({
        kind: "found",
        platformPostId: under(parent)[0].id,
      });
    });

    test("a token without the comment permission is refused for good, with no comment", async () => {
      const { ctx, parent } = await s.lacking();
      const out = await fc().publish(ctx, comment(parent, "not allowed"));
      expect(out).toMatchObject({ kind: "permanent", reason: expect.stringContaining(s.refusal) });
      expect(under(parent)).toHaveLength(0);
      // The same refusal queued on the connected account's comment call (failNext "forbidden").
      const own = await s.post("a post whose comment is forbidden");
      s.emulator.failNext({ kind: "forbidden", on: "comments" });
      expect((await fc().publish(s.ctx, comment(own, "forbidden"))).kind).toBe("permanent");
      expect(under(own)).toHaveLength(0);
    });

    test("a post the platform does not have, and a text over the limit, are refused for good", async () => {
      const missing = { platformPostId: s.unknownParent, url: null };
      expect((await fc().publish(s.ctx, comment(missing, "nowhere"))).kind).toBe("permanent");
      const parent = await s.post("a post with too long a comment");
      const long = "x".repeat(fc().textLimit.max + 1);
      expect((await fc().publish(s.ctx, comment(parent, long))).kind).toBe("permanent");
      expect(under(parent)).toHaveLength(0);
    });
  });
}

test("LinkedIn without r_member_social cannot read comments back: find says cannot_tell, never absent", async () => {
  // The usual app: LinkedIn grants r_member_social to approved developers only.
  const { rig: r, ctx } = await connectOne(createLinkedInEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    media: () => new Response("no media", { status: 404 }),
  });
  try {
    const parent = await settle(linkedin, ctx, await linkedin.publish!(ctx, job("a post of a usual app")));
    const since = new Date();
    const out = await linkedin.firstComment!.publish(ctx, comment(parent, "written, not readable"));
    expect(out.kind).toBe("published");
    const found = await linkedin.firstComment!.find!(ctx, comment(parent, "written, not readable"), {
      since,
      until: new Date(),
    });
    expect(found.kind).toBe("cannot_tell");
  } finally {
    await r.stop();
  }
});
