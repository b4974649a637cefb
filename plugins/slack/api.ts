/**
 * Slack's Web API as the plugin calls it: one method per call at /api/<method> with the bot token as a
 * bearer, the body form-encoded or JSON as each method's reference allows, and the answer's own verdict.
 * Slack answers HTTP 200 with `{ ok: false, error }` for most refusals, so every call reads `ok` and maps
 * the error here (docs.slack.dev/reference/methods/*, "Errors", read 2026-11-26). The request bodies are
 * built by the functions below and typed by `@slack/web-api`'s argument types (type-only: nothing of the
 * package runs), which tests/plugins/slack-contract.types.ts holds them to.
 */
import type {
  AuthTestResponse,
  ChatPostMessageArguments,
  ChatPostMessageResponse,
  ConversationsHistoryResponse,
  ConversationsInfoResponse,
  ConversationsRepliesResponse,
  FilesCompleteUploadExternalArguments,
  FilesCompleteUploadExternalResponse,
  FilesGetUploadURLExternalArguments,
  FilesGetUploadURLExternalResponse,
  FilesInfoResponse,
} from "@slack/web-api";
import type { FailureOutcome, PluginContext, ProviderHttp } from "../../src/platform/sdk.ts";
import { parseRetryAfter } from "../../src/platform/retry-after.ts";

/** The `ok: false` body every Slack method answers with (docs.slack.dev/apis/web-api, "Evaluating responses"). */
export interface SlackError {
  ok: false;
  error: string;
  needed?: string;
  provided?: string;
  warning?: string;
}

/** Tokens Slack no longer accepts: the engine refreshes (token rotation) or asks the user to reconnect. */
const AUTH_ERRORS = new Set(["not_authed", "invalid_auth", "token_revoked", "token_expired", "account_inactive"]);
/** Slack's own trouble: "it's possible some aspect of the operation succeeded" (the methods' error lists). */
const SERVER_ERRORS = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout"]);
/** What the user must fix in Slack; the message says how. */
const HINTS: Record<string, string> = {
  not_in_channel: "the app is not a member of the channel: invite it there (/invite @app) or connect again",
  channel_not_found: "Slack no longer shows the channel to the app (deleted, or the app was removed): connect again",
  is_archived: "the channel is archived",
  missing_scope: "the app's token lacks a permission: connect the channel again to grant it",
  msg_too_long: "the text is longer than Slack takes",
  restricted_action: "a workspace setting keeps the app from posting in this channel",
};

/** The Outcome of an `ok: false` answer. `creates`: the call that makes the post (a server error may have made it). */
export function slackFailure(body: SlackError, creates: boolean, retryAfter?: string | null): FailureOutcome {
  const error = String(body.error ?? "unknown_error");
  const reason = HINTS[error] ? `Slack: ${error} (${HINTS[error]})` : `Slack: ${error}`;
  if (AUTH_ERRORS.has(error)) return { kind: "auth_expired", reason };
  if (error === "ratelimited" || error === "rate_limited")
    return { kind: "retryable", reason, retryAfterMs: parseRetryAfter(retryAfter, new Date()) ?? 60_000 };
  if (SERVER_ERRORS.has(error))
    return creates
      ? { kind: "unknown", reason: `${reason}, after the creating call was sent` }
      : { kind: "retryable", reason };
  const scopes = error === "missing_scope" ? ` needed ${body.needed ?? "?"}, provided ${body.provided ?? "?"}` : "";
  return { kind: "permanent", reason: reason + scopes, code: error };
}

export type Step<T> = { ok: true; body: T; headers: Headers } | { ok: false; outcome: FailureOutcome };

/**
 * One Web API method. `json` for the methods whose reference lists application/json, otherwise a form
 * (which every method takes). The answer's `ok` decides, not the HTTP status.
 */
export async function call<T extends object>(
  http: ProviderHttp,
  token: string,
  method: string,
  body: { json: object } | { form: Record<string, string> },
  creates = false,
): Promise<Step<T>> {
  const res = await http.request<T & { ok?: boolean }>("POST", `/api/${method}`, {
    ...body,
    headers: { authorization: `Bearer ${token}` },
    creates,
  });
  if (!res.ok) return { ok: false, outcome: res.outcome };
  if (!res.body || res.body.ok !== true)
    return {
      ok: false,
      outcome: slackFailure((res.body ?? { ok: false, error: "empty_answer" }) as unknown as SlackError, creates),
    };
  return { ok: true, body: res.body, headers: res.headers };
}

export const tokenOf = (ctx: PluginContext) => String(ctx.credentials.access_token ?? "");

/** Form fields as strings, dropping the absent ones. */
export function formOf(args: object): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined || v === null) continue;
    out[k] = typeof v === "object" ? JSON.stringify(v) : String(v);
  }
  return out;
}

/** What a text message carries beyond its text (platform_options). */
export interface MessageOptions {
  mrkdwn?: boolean;
  unfurl_links?: boolean;
  unfurl_media?: boolean;
  reply_broadcast?: boolean;
  blocks?: Record<string, unknown>[];
}

/**
 * chat.postMessage's arguments (docs.slack.dev/reference/methods/chat.postMessage, read 2026-11-26):
 * `channel`, `text` (with `blocks`, the notification fallback), `thread_ts` to reply in a thread (the
 * root's ts, never a reply's), `reply_broadcast` to show the reply in the channel too.
 */
export function messageArgs(
  channel: string,
  text: string,
  options: MessageOptions,
  threadTs?: string,
): ChatPostMessageArguments {
  const common = {
    channel,
    text,
    ...(options.mrkdwn !== undefined && { mrkdwn: options.mrkdwn }),
    ...(options.unfurl_links !== undefined && { unfurl_links: options.unfurl_links }),
    ...(options.unfurl_media !== undefined && { unfurl_media: options.unfurl_media }),
  };
  // Block Kit blocks are typed by Slack's own unions; platform_options hands them over as the client wrote them.
  const blocks = options.blocks?.length ? { blocks: options.blocks as unknown as ChatBlocks } : {};
  if (threadTs === undefined) return { ...common, ...blocks };
  return options.reply_broadcast
    ? { ...common, ...blocks, thread_ts: threadTs, reply_broadcast: true }
    : { ...common, ...blocks, thread_ts: threadTs };
}
type ChatBlocks = Extract<ChatPostMessageArguments, { blocks: unknown }>["blocks"];

/**
 * files.getUploadURLExternal's arguments (docs.slack.dev/reference/methods/files.getUploadURLExternal,
 * read 2026-11-26): `filename`, `length` in bytes, and the image's description for screen readers. The
 * method reference names that argument `alt_txt`; Slack's own Node SDK (@slack/web-api, the contract)
 * sends `alt_text`. Both are sent, so the text arrives under whichever name Slack reads.
 */
export function uploadUrlArgs(
  filename: string,
  length: number,
  altText?: string,
): FilesGetUploadURLExternalArguments & { alt_txt?: string } {
  return { filename, length, ...(altText && { alt_text: altText, alt_txt: altText }) };
}

/**
 * files.completeUploadExternal's arguments (docs.slack.dev/reference/methods/files.completeUploadExternal,
 * read 2026-11-26): `files` ([{id, title}]), `channel_id` to share them in, `initial_comment` (the
 * message's text), `thread_ts` to share them as a thread reply.
 */
export function completeArgs(
  files: { id: string; title?: string }[],
  channel: string,
  text: string,
  threadTs?: string,
): FilesCompleteUploadExternalArguments {
  const list = files as [{ id: string; title?: string }, ...{ id: string; title?: string }[]];
  const comment = text.trim() ? { initial_comment: text } : {};
  return threadTs === undefined
    ? { files: list, channel_id: channel, ...comment }
    : { files: list, channel_id: channel, thread_ts: threadTs, ...comment };
}

/**
 * The form body of files.completeUploadExternal: in form encoding `files` is the JSON text of the array
 * (the reference's example: `[{"id":"F044GKUHN9Z", "title":"slack-test"}]`).
 */
export const completeForm = (args: FilesCompleteUploadExternalArguments) => formOf(args);

/** Where the account posts: the channel named at connect (kept with the account, not the refreshable token). */
export const channelOf = (ctx: PluginContext) =>
  String(ctx.account.metadata.channel_id ?? ctx.account.remoteId.split(":")[1]);

/** A message's link: `<workspace>/archives/<channel>/p<ts without the dot>` (Slack's permalink form). */
export function permalink(ctx: PluginContext, ts: string, threadTs?: string): string | null {
  const team = ctx.account.metadata.team_url;
  if (typeof team !== "string" || !team) return null;
  const base = `${team.replace(/\/+$/, "")}/archives/${channelOf(ctx)}/p${ts.replace(".", "")}`;
  return threadTs && threadTs !== ts ? `${base}?thread_ts=${threadTs}&cid=${channelOf(ctx)}` : base;
}

/**
 * The answers the plugin reads, as `@slack/web-api` types them: each call is read through its method's
 * response type, so a field the contract does not have (or types otherwise) does not compile.
 */
export type {
  AuthTestResponse,
  ChatPostMessageResponse,
  ConversationsHistoryResponse,
  ConversationsInfoResponse,
  ConversationsRepliesResponse,
  FilesCompleteUploadExternalResponse,
  FilesGetUploadURLExternalResponse,
  FilesInfoResponse,
};
