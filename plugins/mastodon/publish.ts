/**
 * Publishing a status: each file uploaded with POST /api/v2/media (its alt text as `description`), waited
 * for until the server has processed it (202 Accepted, then GET /api/v1/media/:id answers 206 Partial
 * Content until it is ready and 200 with its url), then POST /api/v1/statuses with the media, the content
 * warning (spoiler_text), visibility, language, a poll, and in_reply_to_id for thread items, under an
 * Idempotency-Key (docs.joinmastodon.org/methods/media/, /methods/statuses/#create; read 2026-11-26).
 * The server's own limits (server.ts) are checked before anything is uploaded.
 */
import { bearerAuth } from "../../src/platform/oauth.ts";
import {
  unreadableMedia,
  type FailureOutcome,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type PublishJob,
} from "../../src/platform/sdk.ts";
import { graphemeCount, mastodonLength } from "../../src/platform/text.ts";
import type { CreateStatusParams, MediaEntity, StatusEntity } from "./contract.ts";
import { accountBase, serverLimits, type ServerLimits } from "./server.ts";

/** platform_options as the plugin reads them (declared in index.ts). */
export interface MastodonOptions {
  visibility?: "public" | "unlisted" | "private" | "direct";
  spoiler_text?: string;
  sensitive?: boolean;
  language?: string;
  poll?: { options: string[]; expires_in: number; multiple?: boolean; hide_totals?: boolean };
}

const WEB_URL = /\bhttps?:\/\/[^\s<>"']+/gi;

/** The length the server counts: content warning and text, each link as the server's reserved width. */
export function statusLength(text: string, spoiler: string, limits: Pick<ServerLimits, "reservedPerUrl">): number {
  const links = (text.match(WEB_URL) ?? []).length;
  return graphemeCount(spoiler) + mastodonLength(text) + links * (limits.reservedPerUrl - 23);
}

const refuse = (code: string, reason: string): FailureOutcome => ({ kind: "permanent", code, reason });

/** What the server would refuse of the status itself, before any file is sent. */
export function limitProblem(job: PublishJob, o: MastodonOptions, limits: ServerLimits, server: string) {
  const length = statusLength(job.content, o.spoiler_text ?? "", limits);
  if (length > limits.maxCharacters)
    return refuse(
      "content_too_long",
      `the status is ${length} characters with its content warning (links as ${limits.reservedPerUrl}); ${server} takes at most ${limits.maxCharacters}.`,
    );
  if (job.media.length > limits.maxMedia)
    return refuse(
      "too_many_media",
      `${job.media.length} files; ${server} takes at most ${limits.maxMedia} per status.`,
    );
  const long = job.media.find((m) => m.alt_text && graphemeCount(m.alt_text) > limits.descriptionLimit);
  if (long)
    return refuse(
      "alt_text_too_long",
      `an alt text is longer than the ${limits.descriptionLimit} characters ${server} takes.`,
    );
  const poll = o.poll;
  if (poll) {
    if (job.media.length)
      return refuse("poll_with_media", "a Mastodon status carries either files or a poll, not both.");
    if (poll.options.length > limits.pollOptions)
      return refuse(
        "invalid_poll",
        `${poll.options.length} poll options; ${server} takes at most ${limits.pollOptions}.`,
      );
    const longOption = poll.options.find((x) => graphemeCount(x) > limits.pollOptionCharacters);
    if (longOption !== undefined)
      return refuse(
        "invalid_poll",
        `the poll option "${longOption.slice(0, 60)}" is longer than ${limits.pollOptionCharacters} characters (${server}).`,
      );
    if (poll.expires_in < limits.pollMinSeconds || poll.expires_in > limits.pollMaxSeconds)
      return refuse(
        "invalid_poll",
        `poll.expires_in must be between ${limits.pollMinSeconds} and ${limits.pollMaxSeconds} seconds on ${server}.`,
      );
  }
  return null;
}

/** The body of POST /api/v1/statuses (JSON, as the API takes it). */
export function statusBody(job: Pick<PublishJob, "content" | "replyTo">, o: MastodonOptions, mediaIds: string[]) {
  const common = {
    ...(job.replyTo && { in_reply_to_id: job.replyTo.platformPostId }),
    ...(o.spoiler_text && { spoiler_text: o.spoiler_text }),
    ...(o.sensitive !== undefined && { sensitive: o.sensitive }),
    ...(o.visibility && { visibility: o.visibility }),
    ...(o.language && { language: o.language }),
  };
  if (mediaIds.length)
    return { ...common, media_ids: mediaIds, ...(job.content && { status: job.content }) } satisfies CreateStatusParams;
  return {
    ...common,
    status: job.content,
    ...(o.poll && {
      poll: {
        options: o.poll.options,
        expires_in: o.poll.expires_in,
        ...(o.poll.multiple !== undefined && { multiple: o.poll.multiple }),
        ...(o.poll.hide_totals !== undefined && { hide_totals: o.poll.hide_totals }),
      },
    }),
  } satisfies CreateStatusParams;
}

type Uploaded = { id: string; ready: boolean };

/** Uploads one file with its alt text; `ready` once the server has processed it. */
async function upload(
  ctx: PluginContext,
  base: string,
  m: MediaItem,
  limits: ServerLimits,
  server: string,
): Promise<Uploaded | FailureOutcome> {
  let bytes: Uint8Array;
  let type: string;
  try {
    const body = await ctx.media.open(m);
    bytes = await body.bytes();
    type = (m.mime_type ?? body.contentType ?? "").split(";")[0].trim().toLowerCase();
  } catch (e) {
    return unreadableMedia(e);
  }
  if (!limits.supportedTypes.includes(type))
    return refuse("media_type_not_supported", `${server} does not take ${type || "files of unknown type"}.`);
  const max = type.startsWith("video/") ? limits.videoBytes : limits.imageBytes;
  if (bytes.byteLength > max)
    return refuse(
      "media_too_large",
      `a file of ${bytes.byteLength} bytes; ${server} takes ${type} up to ${max} bytes.`,
    );
  const form = new FormData();
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), `upload.${type.split("/")[1] ?? "bin"}`);
  if (m.alt_text) form.set("description", m.alt_text);
  const res = await ctx.http.request<MediaEntity>("POST", `${base}/api/v2/media`, {
    multipart: form,
    headers: bearerAuth(ctx),
  });
  if (!res.ok) return res.outcome;
  // 200: processed already (images since 4.0); 202: url stays null until it is.
  return { id: String(res.body.id), ready: res.status === 200 && Boolean(res.body.url) };
}

/** The files still being processed, or what ended the attempt (a file the server could not process). */
async function stillProcessing(ctx: PluginContext, base: string, ids: string[]): Promise<string[] | FailureOutcome> {
  const pending: string[] = [];
  for (const id of ids) {
    const res = await ctx.http.request<MediaEntity>("GET", `${base}/api/v1/media/${encodeURIComponent(id)}`, {
      headers: bearerAuth(ctx),
    });
    if (!res.ok) {
      if (res.status === 422)
        return refuse("media_processing_failed", `the server could not process a file: ${res.outcome.reason}`);
      // Not answering is no answer: look again at the next status check.
      if (res.outcome.kind === "retryable") {
        pending.push(id);
        continue;
      }
      return res.outcome;
    }
    if (res.status === 206 || !res.body.url) pending.push(id);
  }
  return pending;
}

/** What a submitted publish carries to its status checks: the files being processed and the status to make. */
interface Handle {
  v: 1;
  pending: string[];
  body: ReturnType<typeof statusBody>;
  key: string;
}

async function createStatus(
  ctx: PluginContext,
  base: string,
  body: ReturnType<typeof statusBody>,
  key: string,
): Promise<Outcome> {
  // Idempotency-Key: the server answers a repeated key with the status it made (kept an hour), so a 5xx
  // is safe to retry; a timeout still leaves the outcome unknown.
  const res = await ctx.http.request<StatusEntity>("POST", `${base}/api/v1/statuses`, {
    json: body,
    headers: { ...bearerAuth(ctx), "idempotency-key": key },
    creates: true,
    idempotent: true,
  });
  if (!res.ok) return res.outcome;
  return { kind: "published", platformPostId: String(res.body.id), url: res.body.url ?? res.body.uri ?? null };
}

export async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const server = String(ctx.account.metadata.server ?? "the server");
  const base = accountBase(ctx);
  const o = job.options as MastodonOptions;
  const limits = await serverLimits(ctx, base, ctx.account.metadata.limits);
  const problem = limitProblem(job, o, limits, server);
  if (problem) return problem;
  const ids: string[] = [];
  const waiting: string[] = [];
  for (const m of job.media) {
    const up = await upload(ctx, base, m, limits, server);
    if ("kind" in up) return up;
    ids.push(up.id);
    if (!up.ready) waiting.push(up.id);
  }
  const body = statusBody(job, o, ids);
  const pending = waiting.length ? await stillProcessing(ctx, base, waiting) : [];
  if (!Array.isArray(pending)) return pending;
  if (pending.length) {
    const handle: Handle = { v: 1, pending, body, key: job.idempotencyToken };
    return { kind: "submitted", handle: JSON.stringify(handle) };
  }
  return createStatus(ctx, base, body, job.idempotencyToken);
}

/** A status check of a submitted publish: the status is made once every file is processed. */
export async function checkStatus(ctx: PluginContext, raw: string): Promise<Outcome> {
  let handle: Handle;
  try {
    handle = JSON.parse(raw) as Handle;
  } catch {
    return { kind: "permanent", reason: "the status check's handle is not one this plugin made" };
  }
  const base = accountBase(ctx);
  const pending = await stillProcessing(ctx, base, handle.pending);
  if (!Array.isArray(pending)) return pending;
  if (pending.length) return { kind: "submitted", handle: JSON.stringify({ ...handle, pending }) };
  return createStatus(ctx, base, handle.body, handle.key);
}
