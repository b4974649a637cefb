/**
 * Slack: one channel of a workspace, posted to by the operator's Slack app with its bot token (OAuth v2).
 *
 * Connect: the consent asks for the `incoming-webhook` scope beside the bot scopes, so Slack's own
 * consent screen makes the installer pick the channel ("triggers a user-facing channel picker",
 * docs.slack.dev/reference/scopes/incoming-webhook, read 2026-11-26), and oauth.v2.access names it in
 * `incoming_webhook.channel_id`. One account is that channel. The bot must be a member to post and
 * upload there (chat:write: "post messages in approved channels & conversations"): Crier joins a public
 * channel itself (conversations.join, channels:join); a private one needs the app invited first.
 *
 * Publish: text through chat.postMessage (40,000 characters); files through files.getUploadURLExternal,
 * a POST of the bytes to the upload URL, and files.completeUploadExternal sharing them in the channel with
 * the text as initial_comment (files.upload is retired). A thread is replies under the first message
 * (thread_ts). Slack may share files after the call returns: the message's ts is read back through
 * files.info then ("submitted" until it shows). Token rotation (12-hour tokens and a refresh token) is
 * supported when the app has it on.
 */
import { t } from "elysia";
import {
  definePlugin,
  unreadableMedia,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type PublishJob,
} from "../../src/platform/sdk.ts";
import { oauthFlow, refreshAhead, refreshTokenGrant } from "../../src/platform/oauth.ts";
import { publishAsReply } from "../../src/platform/first-comment.ts";
import { GB } from "../../src/platform/limits.ts";
import { identity } from "./connect.ts";
import { accountStats, checkAccount, fetchRecent, findReply, metrics } from "./reads.ts";
import {
  call,
  channelOf,
  permalink,
  type ChatPostMessageResponse,
  type FilesCompleteUploadExternalResponse,
  type FilesGetUploadURLExternalResponse,
  type FilesInfoResponse,
  completeArgs,
  completeForm,
  formOf,
  messageArgs,
  tokenOf,
  uploadUrlArgs,
  type MessageOptions,
  type Step,
} from "./api.ts";

const TOKEN_URL = "https://slack.com/api/oauth.v2.access";
/**
 * The `text` of a message: Slack truncates past 40,000 characters, with a message_truncated warning
 * (docs.slack.dev/reference/methods/chat.postMessage, "Truncating content"; changelog 2018-04, read 2026-11-26).
 */
const TEXT_MAX = 40_000;
/** files.getUploadURLExternal: alt_txt_too_large past 1,000 characters (its "Errors", read 2026-11-26). */
const ALT_MAX = 1000;
/** Slack takes files up to 1 GB (slack.com/help/articles/201330736, "File size limit", read 2026-11-26). */
const FILE_MAX = 1 * GB;
/** The reference names no count per share; Crier shares at most 10 files in one message, a bound of its own. */
const FILES_MAX = 10;

/**
 * Bot scopes (docs.slack.dev/reference/scopes, read 2026-11-26): chat:write posts, files:write uploads,
 * files:read reads a share's message back (files.info), channels:join joins a public channel,
 * channels:read/groups:read read the channel (conversations.info), channels:history/groups:history list
 * its messages and their reactions and replies (workflow source, reconciling, metrics), incoming-webhook
 * makes the consent pick the channel.
 */
const SCOPES = [
  "chat:write",
  "files:write",
  "files:read",
  "channels:join",
  "channels:read",
  "groups:read",
  "channels:history",
  "groups:history",
  "incoming-webhook",
] as const;

const optionsSchema = t.Object(
  {
    mrkdwn: t.Optional(
      t.Boolean({ description: "Extension: false sends the text as plain text, without Slack's mrkdwn markup." }),
    ),
    unfurl_links: t.Optional(t.Boolean({ description: "Extension: true unfurls text-based links (a preview)." })),
    unfurl_media: t.Optional(t.Boolean({ description: "Extension: false does not unfurl media links." })),
    reply_broadcast: t.Optional(
      t.Boolean({ description: "Extension: a thread reply is also shown in the channel (thread items only)." }),
    ),
    blocks: t.Optional(
      t.Array(t.Record(t.String(), t.Unknown()), {
        maxItems: 50,
        description:
          "Extension: Block Kit blocks (at most 50) for a text message; the text is then the notification fallback. " +
          "Not sent with files (files.completeUploadExternal ignores blocks beside an initial comment).",
      }),
    ),
  },
  { additionalProperties: false },
);

const refresh = refreshTokenGrant({ name: "Slack", holder: "channel", tokenUrl: TOKEN_URL, clientAuth: "basic" });

/** The root of the thread a reply goes under: Slack wants the parent message's ts, never a reply's. */
const threadOf = (job: PublishJob) => job.replyTo && (job.replyTo.rootPlatformPostId ?? job.replyTo.platformPostId);

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  // Several calls make one post with files: a rotating token about to end is renewed first.
  const early = await refreshAhead(ctx, refresh);
  if (early) return early;
  const channel = channelOf(ctx);
  const thread = threadOf(job);
  if (job.media.length) return publishFiles(ctx, job, channel, thread);
  const sent = await call<ChatPostMessageResponse>(
    ctx.http,
    tokenOf(ctx),
    "chat.postMessage",
    { json: messageArgs(channel, job.content, job.options as MessageOptions, thread) },
    true,
  );
  if (!sent.ok) return sent.outcome;
  const ts = sent.body.ts;
  if (!ts) return { kind: "unknown", reason: "Slack accepted the message but named no ts" };
  const truncated = [sent.body.warning, ...(sent.body.response_metadata?.warnings ?? [])].includes("message_truncated");
  return {
    kind: "published",
    platformPostId: ts,
    url: permalink(ctx, ts, thread),
    ...(truncated && {
      notice: { code: "message_truncated", message: `Slack truncated the text to ${TEXT_MAX} characters.` },
    }),
  };
}

/** A file's name for Slack: the URL's last segment when it has an extension, else one from the type. */
function fileName(item: MediaItem, contentType: string, i: number): string {
  const last = decodeURIComponent(new URL(item.url).pathname.split("/").pop() ?? "");
  if (/^[^/\\]{1,200}\.[A-Za-z0-9]{2,5}$/.test(last)) return last;
  const ext = (contentType.split("/")[1] ?? "bin").replace("jpeg", "jpg").replace("quicktime", "mov").split(";")[0];
  return `${item.type}-${i + 1}.${ext}`;
}

async function uploadOne(ctx: PluginContext, item: MediaItem, i: number): Promise<Step<{ id: string }>> {
  let contentType: string;
  let bytes: Uint8Array<ArrayBuffer>;
  // Read whole, as files.getUploadURLExternal wants the length before the upload (the media guard bounds it).
  try {
    const body = await ctx.media.open(item);
    contentType = body.contentType;
    bytes = (await body.bytes()) as Uint8Array<ArrayBuffer>;
  } catch (e) {
    return { ok: false, outcome: unreadableMedia(e) };
  }
  const alt = item.type === "image" ? item.alt_text || undefined : undefined;
  const url = await call<FilesGetUploadURLExternalResponse>(ctx.http, tokenOf(ctx), "files.getUploadURLExternal", {
    form: formOf(uploadUrlArgs(fileName(item, contentType, i), bytes.byteLength, alt)),
  });
  if (!url.ok) return url;
  const { upload_url, file_id } = url.body;
  if (!upload_url || !file_id) return { ok: false, outcome: { kind: "retryable", reason: "Slack gave no upload URL" } };
  // The bytes go to Slack's file service as the raw body; it answers 200 when it has them. The upload URL
  // is its own authorization: the bot token is not sent to it.
  const put = await ctx.http.request("POST", upload_url, {
    body: bytes,
    headers: { "content-type": contentType || "application/octet-stream" },
  });
  // Nothing is shared before files.completeUploadExternal: a failed upload leaves nothing in the channel.
  if (!put.ok) return { ok: false, outcome: put.outcome };
  return { ok: true, body: { id: file_id }, headers: put.headers };
}

type Share = { ts?: string; thread_ts?: string };
type Shared = { shares?: { public?: Record<string, Share[]>; private?: Record<string, Share[]> } };

/** The ts of the message that shares `file` in `channel`, once Slack has shared it. */
function sharedTs(file: Shared | undefined, channel: string, thread?: string): string | undefined {
  const shares = [...(file?.shares?.public?.[channel] ?? []), ...(file?.shares?.private?.[channel] ?? [])];
  return shares.find((s) => (thread ? s.thread_ts === thread : true))?.ts;
}

interface Pending {
  file: string;
  channel: string;
  thread?: string;
}

async function publishFiles(ctx: PluginContext, job: PublishJob, channel: string, thread?: string): Promise<Outcome> {
  const files: { id: string }[] = [];
  for (const [i, item] of job.media.entries()) {
    const up = await uploadOne(ctx, item, i);
    if (!up.ok) return up.outcome;
    files.push(up.body);
  }
  const done = await call<FilesCompleteUploadExternalResponse>(
    ctx.http,
    tokenOf(ctx),
    "files.completeUploadExternal",
    { form: completeForm(completeArgs(files, channel, job.content, thread)) },
    true,
  );
  if (!done.ok) return done.outcome;
  const ts = sharedTs(done.body.files?.[0], channel, thread);
  if (ts) return { kind: "published", platformPostId: ts, url: permalink(ctx, ts, thread) };
  // Slack shares the files once it has processed them; the message's ts shows in files.info then.
  return { kind: "submitted", handle: JSON.stringify({ file: files[0].id, channel, thread } satisfies Pending) };
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const pending = JSON.parse(handle) as Pending;
  const info = await call<FilesInfoResponse>(ctx.http, tokenOf(ctx), "files.info", {
    form: { file: pending.file },
  });
  if (!info.ok) {
    if (info.outcome.kind === "retryable") return { kind: "submitted", handle };
    if (info.outcome.kind === "auth_expired") return info.outcome;
    // The files were shared; only the message holding them cannot be read back: never a failure to retry.
    return { kind: "unknown", reason: `the files were shared, but files.info was refused: ${info.outcome.reason}` };
  }
  const ts = sharedTs(info.body.file, pending.channel, pending.thread);
  return ts
    ? { kind: "published", platformPostId: ts, url: permalink(ctx, ts, pending.thread) }
    : { kind: "submitted", handle };
}

const plugin = definePlugin({
  platform: "slack",
  displayName: "Slack",
  defaultApiUrl: "https://slack.com",
  textLimit: { max: TEXT_MAX, unit: "characters" },
  altText: { image: { max_length: ALT_MAX, unit: "characters" }, video: null },
  capabilities: {
    destination: true,
    source: true,
    backfill: false,
    text: true,
    images: true,
    video: true,
    replies: true,
    threads: true,
  },
  mediaRequirements: {
    // Slack takes any file; these are the ones it shows inline in a message.
    supported_formats: [
      "image/jpeg",
      "image/png",
      "image/gif",
      "image/webp",
      "video/mp4",
      "video/quicktime",
      "video/webm",
    ],
    convertible_formats: {},
    max_size_bytes: { image: FILE_MAX, video: FILE_MAX, gif: FILE_MAX },
    file_constraints: {
      maxFiles: FILES_MAX,
      maxImageFiles: FILES_MAX,
      maxVideoFiles: FILES_MAX,
      allowMixedMedia: true,
    },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema,
  // Tier "special" for chat.postMessage: about one message a second per channel (docs.slack.dev/apis/web-api/rate-limits).
  concurrency: 8,
  requiredScopes: {
    publish: ["chat:write", "files:write", "files:read"],
    first_comment: ["chat:write"],
    workflow_source: ["channels:history", "groups:history"],
    metrics: ["channels:history", "groups:history"],
    account_stats: ["channels:read", "groups:read"],
  },
  connect: oauthFlow({
    authorizeUrl: "https://slack.com/oauth/v2/authorize",
    tokenUrl: TOKEN_URL,
    // Slack asks for the client's id and secret by HTTP Basic rather than in the form (oauth.v2.access, "Arguments").
    clientAuth: "basic",
    scopes: [...SCOPES],
    scopeSeparator: ",",
    identity,
  }),
  publish,
  checkStatus,
  refresh,
  firstComment: {
    textLimit: { max: TEXT_MAX, unit: "characters" },
    kind: "reply",
    // A reply in the post's thread, made like any thread item.
    publish: (ctx, comment) => publishAsReply(publish, ctx, comment),
    find: findReply,
  },
  fetchRecent,
  metrics,
  metricNames: ["likes", "comments"],
  accountStats,
  checkAccount,
});

export default plugin;
