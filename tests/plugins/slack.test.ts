/**
 * Slack specifics beyond the conformance suite: the channel picked on Slack's consent screen and the bot
 * joining it, text with its options, files with alt text and an initial comment, threads and first
 * comments as thread replies, Slack's `{ ok: false }` errors mapped to outcomes, token rotation, and the
 * facts of Slack's contract the emulator holds every request to.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { RefreshError, type Outcome, type PluginContext } from "../../src/platform/sdk.ts";
import slack from "../../plugins/slack/index.ts";
import { slackFailure } from "../../plugins/slack/api.ts";
import { createSlackEmulator, type SlackEmulator } from "../../plugins/slack/emulator.ts";
import { followAuthorization } from "../support/connect-kit.ts";
import { makePng } from "../support/media-fixtures.ts";
import { makeVideo } from "../support/media-files.ts";
import { connectOne, job, type OAuthRig } from "./support.ts";

const PNG = makePng(2, 2);
const MP4 = makeVideo({ width: 320, height: 240, seconds: 1 });

let emulator: SlackEmulator;
let rig: OAuthRig<SlackEmulator>;
let ctx: PluginContext;
let url: (f: string) => string;

beforeAll(async () => {
  ({ rig, emulator, ctx, url } = await connectOne(createSlackEmulator(), {
    authorizePath: "/oauth/v2/authorize",
    tokenPath: "/api/oauth.v2.access",
    media: (req) =>
      new URL(req.url).pathname.endsWith(".mp4")
        ? new Response(MP4, { headers: { "content-type": "video/mp4" } })
        : new Response(PNG, { headers: { "content-type": "image/png" } }),
    username: "#general",
    // The files of these tests are served from loopback, which the engine's own media guard refuses.
    mediaMaxBytes: 50 * 1024 * 1024,
  }));
});
afterAll(() => rig.stop());

async function settle(out: Outcome, c = ctx): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await slack.checkStatus!(c, out.handle);
  return out;
}

function published(out: Outcome): { platformPostId: string; url: string | null } {
  if (out.kind !== "published") throw new Error(`expected published, got ${JSON.stringify(out)}`);
  return out;
}

/** A raw Web API call with the connected account's token, as any Slack client would make it. */
async function raw(method: string, body: Record<string, string> | object, json = false) {
  const res = await fetch(`${rig.served.url}/api/${method}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${String(ctx.credentials.access_token)}`,
      "content-type": json ? "application/json" : "application/x-www-form-urlencoded",
    },
    body: json ? JSON.stringify(body) : new URLSearchParams(body as Record<string, string>).toString(),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Another consent through the same server: the page the user lands on, and the profile's accounts after it. */
async function connectAgain() {
  const res = await rig.h.request("POST", "/v1/accounts/connect/slack", { token: rig.token });
  const page = await followAuthorization(res.body.data.authorization_url);
  const list = await rig.h.request("GET", "/v1/accounts", { token: rig.token });
  return { page, accounts: list.body.data as { username: string; metadata: Record<string, unknown> }[] };
}

test("connect: the channel picked on Slack's consent is the account, and the bot joins it", async () => {
  const [row] = rig.rows;
  expect(row.remoteId).toBe("T0SANDBOX:C0GENERAL");
  expect(row.metadata).toMatchObject({
    channel_id: "C0GENERAL",
    channel_name: "general",
    private: false,
    team_url: "https://sandbox-workspace.slack.com/",
  });
  // The public channel had no bot in it: Crier joined it, so messages and files can go there.
  expect(emulator.channel("C0GENERAL").is_member).toBe(true);
  // Token rotation is on for the sandbox app: a 12-hour token and its refresh token are kept.
  expect(ctx.credentials.refresh_token).toStartWith("xoxe-1-");
  expect(Date.parse(String(ctx.credentials.expires_at)) - Date.now()).toBeGreaterThan(11 * 3600_000);
  expect(String(ctx.credentials.scope)).toContain("chat:write");
});

test("connect: a private channel the app was not invited to is refused with what to do", async () => {
  emulator.channel("G0PRIVATE").is_member = false;
  emulator.pickChannel("G0PRIVATE");
  const { page, accounts: list } = await connectAgain();
  expect(page.html).toContain("invite it to the channel in Slack");
  expect(list.map((a) => a.username)).toEqual(["#general"]);
  // Once invited, the same channel connects as a second account.
  emulator.channel("G0PRIVATE").is_member = true;
  const again = await connectAgain();
  expect(again.page.html).toContain("Account connected");
  expect(again.accounts.map((a) => a.username).sort()).toEqual(["#general", "#private-team"]);
  emulator.pickChannel("C0GENERAL");
});

test("text: chat.postMessage with the options, a permalink, and Slack's truncation notice", async () => {
  const out = published(
    await slack.publish!(
      ctx,
      job("*hello* slack", {
        options: {
          mrkdwn: false,
          unfurl_links: true,
          blocks: [{ type: "section", text: { type: "mrkdwn", text: "b" } }],
        },
      }),
    ),
  );
  expect(out.platformPostId).toMatch(/^\d+\.\d{6}$/);
  expect(out.url).toBe(
    `https://sandbox-workspace.slack.com/archives/C0GENERAL/p${out.platformPostId.replace(".", "")}`,
  );
  expect(emulator.posts().at(-1)).toMatchObject({ id: out.platformPostId, text: "*hello* slack", replyTo: null });
  // Crier refuses a longer text at creation; were one to reach Slack, the post stands with Slack's notice.
  const long = await slack.publish!(ctx, job("x".repeat(40_001)));
  expect(long).toMatchObject({ kind: "published", notice: { code: "message_truncated" } });
  expect(emulator.posts().at(-1)!.text.length).toBe(40_000);
});

test("files: two images with alt text and a video, the text as the initial comment, read back through files.info", async () => {
  const first = await slack.publish!(
    ctx,
    job("look at these", {
      media: [
        { url: url("red.png"), type: "image", alt_text: "A red square" },
        { url: url("blue.png"), type: "image" },
        { url: url("clip.mp4"), type: "video", alt_text: "never sent for a video" },
      ],
    }),
  );
  // Slack shares the files after the call returns: the message's ts comes from files.info.
  expect(first.kind).toBe("submitted");
  const out = published(await settle(first));
  const post = emulator.posts().at(-1)!;
  expect(post).toMatchObject({ id: out.platformPostId, text: "look at these" });
  expect(post.media.map((m) => m.type)).toEqual(["image", "image", "video"]);
  expect(post.media[0].alt).toBe("A red square");
  expect(post.media[1].alt).toBeUndefined();
  expect(post.media[2].alt).toBeUndefined();
  const names = emulator.files().slice(-3);
  expect(names.map((f) => f.name)).toEqual(["red.png", "blue.png", "clip.mp4"]);
  expect(names[0].size).toBe(PNG.byteLength);
});

test("threads: the account's second item replies under the first, files included; a first comment is a reply", async () => {
  const root = published(await slack.publish!(ctx, job("thread root")));
  const reply = published(
    await slack.publish!(ctx, job("second", { replyTo: { platformPostId: root.platformPostId } })),
  );
  expect(emulator.posts().at(-1)).toMatchObject({ id: reply.platformPostId, replyTo: root.platformPostId });
  expect(reply.url).toContain(`?thread_ts=${root.platformPostId}&cid=C0GENERAL`);
  // A third item names the second as its parent and the first as the root: Slack wants the root's ts.
  const third = published(
    await settle(
      await slack.publish!(
        ctx,
        job("third, with a file", {
          media: [{ url: url("x.png"), type: "image" }],
          replyTo: { platformPostId: reply.platformPostId, rootPlatformPostId: root.platformPostId },
        }),
      ),
    ),
  );
  expect(emulator.posts().at(-1)).toMatchObject({ id: third.platformPostId, replyTo: root.platformPostId });
  const comment = await slack.firstComment!.publish(ctx, {
    text: "first comment",
    parent: { platformPostId: root.platformPostId, url: root.url },
    options: {},
    idempotencyToken: crypto.randomUUID(),
  });
  expect(comment.kind).toBe("published");
  expect(emulator.posts().at(-1)).toMatchObject({ text: "first comment", replyTo: root.platformPostId });
  // An unknown comment is looked for in the thread (conversations.replies): found by its text, else absent.
  const window = { since: new Date(Date.now() - 60_000), until: new Date() };
  const asked = (text: string) => ({
    text,
    parent: { platformPostId: root.platformPostId, url: root.url },
    options: {},
    idempotencyToken: "x",
  });
  const found = await slack.firstComment!.find!(ctx, asked("first comment"), window);
  expect(found).toMatchObject({
    kind: "found",
    platformPostId: (comment as { platformPostId: string }).platformPostId,
  });
  expect((await slack.firstComment!.find!(ctx, asked("never said"), window)).kind).toBe("absent");
  // The replies count on the root, as metrics read them.
  const m = await slack.metrics!(ctx, [root.platformPostId]);
  expect(m[root.platformPostId]).toMatchObject({ comments: 3, likes: 0 });
  emulator.engage(root.platformPostId, { reactions: 5 });
  expect((await slack.metrics!(ctx, [root.platformPostId]))[root.platformPostId].likes).toBe(5);
});

test("errors: Slack's ok:false answers become the right outcomes, and nothing is posted", async () => {
  const before = emulator.posts().length;
  // The bot removed from the channel: permanent, with what to do.
  emulator.channel("C0GENERAL").is_member = false;
  const out = await slack.publish!(ctx, job("not in channel"));
  expect(out).toMatchObject({ kind: "permanent", code: "not_in_channel" });
  expect((out as { reason: string }).reason).toContain("invite it");
  emulator.channel("C0GENERAL").is_member = true;

  emulator.failNext({ kind: "rate_limit", retryAfterSeconds: 7, on: "chat.postMessage" });
  expect(await slack.publish!(ctx, job("slow down"))).toMatchObject({ kind: "retryable", retryAfterMs: 7000 });

  emulator.failNext({ kind: "forbidden", on: "chat.postMessage" });
  const scope = await slack.publish!(ctx, job("no scope"));
  expect(scope).toMatchObject({ kind: "permanent", code: "missing_scope" });
  expect((scope as { reason: string }).reason).toContain("needed chat:write");

  // A server error on the creating call may have posted; on the upload step nothing exists yet.
  emulator.failNext({ kind: "server_error", on: "chat.postMessage" });
  expect((await slack.publish!(ctx, job("maybe"))).kind).toBe("unknown");
  emulator.failNext({ kind: "server_error", on: "files.getUploadURLExternal" });
  expect((await slack.publish!(ctx, job("file", { media: [{ url: url("a.png"), type: "image" }] }))).kind).toBe(
    "retryable",
  );

  // A token Slack does not know.
  const stranger = { ...ctx, credentials: { access_token: "xoxb-not-a-token" } };
  expect(await slack.publish!(stranger, job("who"))).toMatchObject({ kind: "auth_expired" });
  expect(emulator.posts().length).toBe(before);

  // The mapping itself, for answers the emulator has no reason to give.
  expect(slackFailure({ ok: false, error: "token_revoked" }, true).kind).toBe("auth_expired");
  expect(slackFailure({ ok: false, error: "ratelimited" }, true, "3")).toMatchObject({
    kind: "retryable",
    retryAfterMs: 3000,
  });
  expect(slackFailure({ ok: false, error: "channel_not_found" }, true)).toMatchObject({
    kind: "permanent",
    code: "channel_not_found",
  });
  expect(slackFailure({ ok: false, error: "fatal_error" }, false).kind).toBe("retryable");
});

test("token rotation: refresh spends the refresh token, saves the next pair, and a spent one is refused", async () => {
  const spent = String(ctx.credentials.refresh_token);
  const [before] = await rig.h.db.db.select().from(accounts).where(eq(accounts.id, ctx.account.id));
  const fresh = await slack.refresh!(ctx);
  expect(fresh.refresh_token).not.toBe(spent);
  expect(fresh.access_token).toStartWith("xoxe.xoxb-");
  const [row] = await rig.h.db.db.select().from(accounts).where(eq(accounts.id, ctx.account.id));
  // Saved encrypted; the refresh token itself never ends, so the account has no end of access.
  expect(row.credentials).not.toBe(before.credentials);
  expect(row.credentialsExpireAt).toBeNull();
  ctx = rig.context(row);
  expect(published(await slack.publish!(ctx, job("after refresh"))).platformPostId).toBeTruthy();
  const old = { ...ctx, credentials: { ...ctx.credentials, refresh_token: spent }, saveCredentials: async () => {} };
  const refused = await slack.refresh!(old).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(RefreshError);
  expect((refused as RefreshError).retryable).toBe(false);
});

test("contract: the emulator refuses what Slack's reference refuses", async () => {
  // files.completeUploadExternal's files in a form is the JSON text of [{id, title}].
  expect(await raw("files.completeUploadExternal", { files: "F0ABC", channel_id: "C0GENERAL" })).toEqual({
    ok: false,
    error: "invalid_arguments",
  });
  // The description is at most 1,000 characters, under either name.
  expect(
    await raw("files.getUploadURLExternal", { filename: "a.png", length: "10", alt_txt: "x".repeat(1001) }),
  ).toEqual({ ok: false, error: "alt_txt_too_large" });
  expect(await raw("files.getUploadURLExternal", { filename: "a.png", length: "0" })).toEqual({
    ok: false,
    error: "missing_argument",
  });
  // A message needs text or blocks.
  expect(await raw("chat.postMessage", { channel: "C0GENERAL" }, true)).toEqual({ ok: false, error: "no_text" });
  // Reading methods take no JSON body: its arguments are not read.
  expect(await raw("conversations.info", { channel: "C0GENERAL" }, true)).toEqual({
    ok: false,
    error: "channel_not_found",
  });
  // A file whose bytes never reached the upload URL cannot be shared.
  const { file_id } = (await raw("files.getUploadURLExternal", { filename: "b.png", length: "5" })) as {
    file_id: string;
  };
  expect(
    await raw("files.completeUploadExternal", { files: JSON.stringify([{ id: file_id }]), channel_id: "C0GENERAL" }),
  ).toEqual({ ok: false, error: "file_not_found" });
});

test("reads: recent messages of the channel, its members, the token's scopes", async () => {
  const recent = await slack.fetchRecent!(ctx, new Date(Date.now() - 3600_000));
  const texts = recent.map((r) => r.content);
  expect(texts).toContain("thread root");
  // Thread replies are not posts of the channel.
  expect(texts).not.toContain("second");
  const withFiles = recent.find((r) => r.content === "look at these")!;
  expect(withFiles.kind).toBe("video");
  expect(withFiles.media.every((m) => m.downloadable === false)).toBe(true);
  emulator.setFollowers(321);
  expect(await slack.accountStats!(ctx)).toEqual({ followers: 321 });
  const check = await slack.checkAccount!(ctx);
  expect(check.grantedScopes).toContain("files:write");
});
