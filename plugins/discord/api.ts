/**
 * Discord's REST API as the plugin calls it (discord.com/developers/docs/reference, API v10, checked
 * 2026-11-26): the paths, the request bodies (built here, typed by discord-api-types, the contract
 * tests/plugins/discord-contract.types.ts checks them against), and Discord's own way of failing.
 */
import { createHash } from "node:crypto";
import type {
  APIAllowedMentions,
  APIEmbed,
  RESTAPIAttachment,
  RESTPostAPIChannelMessageJSONBody,
  RESTPostAPIWebhookWithTokenJSONBody,
} from "discord-api-types/v10";
import type { FailureOutcome, ProviderResponse } from "../../src/platform/sdk.ts";

export const API = "/api/v10";
export const DEFAULT_API_URL = "https://discord.com";

/** Message flags (docs: resources/message#message-object-message-flags). */
export const FLAG_SUPPRESS_EMBEDS = 1 << 2;
export const FLAG_SUPPRESS_NOTIFICATIONS = 1 << 12;

/**
 * Incoming webhook URLs as Discord hands them out (Server Settings → Integrations → Webhooks → Copy
 * Webhook URL): only Discord's own hosts, https, the id and the token. The plugin never requests the URL
 * itself: it sends the id and token to the configured API base, so a pasted URL cannot steer a request
 * anywhere else (the SSRF guard).
 */
const WEBHOOK_URL =
  /^https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api(?:\/v\d{1,2})?\/webhooks\/(\d{17,20})\/([A-Za-z0-9_-]{60,100})\/?$/;

export function parseWebhookUrl(raw: string): { id: string; token: string } | null {
  const m = WEBHOOK_URL.exec(raw.trim());
  return m ? { id: m[1], token: m[2] } : null;
}

/** A channel id, or a channel link (right-click the channel → Copy Link): https://discord.com/channels/<server>/<channel>. */
export function parseChannel(raw: string): string | null {
  const v = raw.trim();
  if (/^\d{17,20}$/.test(v)) return v;
  const m = /^https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/channels\/(\d{17,20})\/(\d{17,20})\/?$/.exec(v);
  return m ? m[2] : null;
}

/**
 * The create call's nonce (at most 25 characters), the same for every attempt of one target: with
 * enforce_nonce Discord answers the message already made with it instead of making a second one.
 */
export function nonceOf(idempotencyToken: string): string {
  return createHash("sha256").update(idempotencyToken).digest("hex").slice(0, 25);
}

export interface MessageParts {
  content: string;
  embeds?: APIEmbed[];
  /** One per file, in the order of the files[n] parts. */
  attachments?: { filename: string; description?: string }[];
  silent?: boolean;
  suppressEmbeds?: boolean;
  /** Mentions in the text ping nobody unless the post allows them. */
  allowMentions?: boolean;
}

const attachmentsOf = (parts: MessageParts): RESTAPIAttachment[] | undefined =>
  parts.attachments?.map((a, i) => ({
    id: i,
    filename: a.filename,
    ...(a.description && { description: a.description }),
  }));

/** Without allowed_mentions Discord notifies every mention in the text; an empty parse list notifies none. */
const mentionsOf = (parts: MessageParts): { allowed_mentions?: APIAllowedMentions } =>
  parts.allowMentions ? {} : { allowed_mentions: { parse: [] } };

function flagsOf(parts: MessageParts): number | undefined {
  const flags = (parts.silent ? FLAG_SUPPRESS_NOTIFICATIONS : 0) | (parts.suppressEmbeds ? FLAG_SUPPRESS_EMBEDS : 0);
  return flags || undefined;
}

/** POST /channels/{channel.id}/messages (docs: resources/message#create-message). */
export function channelMessageBody(
  parts: MessageParts,
  p: { nonce: string; replyTo?: { messageId: string; channelId: string } },
): RESTPostAPIChannelMessageJSONBody {
  return {
    ...(parts.content && { content: parts.content }),
    ...(parts.embeds?.length && { embeds: parts.embeds }),
    ...(parts.attachments?.length && { attachments: attachmentsOf(parts) }),
    ...mentionsOf(parts),
    ...(flagsOf(parts) && { flags: flagsOf(parts) }),
    nonce: p.nonce,
    enforce_nonce: true,
    ...(p.replyTo && {
      // A reply whose parent was deleted meanwhile is still posted, as a plain message.
      message_reference: {
        message_id: p.replyTo.messageId,
        channel_id: p.replyTo.channelId,
        fail_if_not_exists: false,
      },
    }),
  };
}

/** POST /webhooks/{webhook.id}/{webhook.token}?wait=true (docs: resources/webhook#execute-webhook). */
export function webhookMessageBody(parts: MessageParts): RESTPostAPIWebhookWithTokenJSONBody {
  return {
    ...(parts.content && { content: parts.content }),
    ...(parts.embeds?.length && { embeds: parts.embeds }),
    ...(parts.attachments?.length && { attachments: attachmentsOf(parts) }),
    ...mentionsOf(parts),
    ...(flagsOf(parts) && { flags: flagsOf(parts) }),
  };
}

/** A JSON body, or multipart with payload_json and files[n] when there are files (docs: reference#uploading-files). */
export function bodyOf(json: object, files: File[]): { json: unknown } | { multipart: FormData } {
  if (files.length === 0) return { json };
  const form = new FormData();
  form.append("payload_json", JSON.stringify(json));
  files.forEach((f, i) => form.append(`files[${i}]`, f, f.name));
  return { multipart: form };
}

/** JSON error codes (docs: topics/opcodes-and-status-codes#json). */
export const ERROR = {
  UNKNOWN_CHANNEL: 10003,
  UNKNOWN_MESSAGE: 10008,
  UNKNOWN_WEBHOOK: 10015,
  REQUEST_TOO_LARGE: 40005,
  MISSING_ACCESS: 50001,
  CANNOT_SEND_EMPTY: 50006,
  MISSING_PERMISSIONS: 50013,
  INVALID_WEBHOOK_TOKEN: 50027,
  INVALID_FORM_BODY: 50035,
} as const;

interface DiscordError {
  code?: number;
  message?: string;
  retry_after?: number;
  global?: boolean;
  errors?: unknown;
}

/** The first message of an Invalid Form Body's nested errors, e.g. "content: Must be 2000 or fewer in length." */
function firstFieldError(errors: unknown, path: string[] = []): string | undefined {
  if (!errors || typeof errors !== "object") return undefined;
  const o = errors as Record<string, unknown>;
  if (Array.isArray(o._errors) && o._errors[0]?.message) return `${path.join(".")}: ${o._errors[0].message}`;
  for (const [k, v] of Object.entries(o)) {
    const found = firstFieldError(v, [...path, k]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Discord's signals (docs: topics/rate-limits, topics/opcodes-and-status-codes, checked 2026-11-26): 429
 * with retry_after in seconds; 401 for the bot token (every bot-mode account of the server) or a webhook
 * token; the channel or webhook gone, or the bot's permission taken away: the account needs attention.
 */
export function classifyResponse(res: ProviderResponse): FailureOutcome | undefined {
  const body = (res.body ?? {}) as DiscordError;
  const reason = body.message ? `${body.message}${body.code ? ` (${body.code})` : ""}` : `HTTP ${res.status}`;
  if (res.status === 429) {
    const seconds = body.retry_after ?? Number(res.headers.get("retry-after") ?? NaN);
    return { kind: "retryable", reason, ...(Number.isFinite(seconds) && { retryAfterMs: Math.ceil(seconds * 1000) }) };
  }
  if (body.code === ERROR.INVALID_WEBHOOK_TOKEN || body.code === ERROR.UNKNOWN_WEBHOOK)
    return { kind: "auth_expired", reason: `the webhook was deleted or its token reset: ${reason}` };
  if (res.status === 401)
    return { kind: "auth_expired", reason: `Discord refused the bot token: ${reason}`, scope: "server" };
  if (
    body.code === ERROR.MISSING_PERMISSIONS ||
    body.code === ERROR.MISSING_ACCESS ||
    body.code === ERROR.UNKNOWN_CHANNEL
  )
    return { kind: "auth_expired", reason: `the bot can no longer post in the channel: ${reason}` };
  if (res.status === 413 || body.code === ERROR.REQUEST_TOO_LARGE)
    return { kind: "permanent", reason: `Discord refused the files as too large: ${reason}`, code: "media_too_large" };
  if (body.code === ERROR.INVALID_FORM_BODY) {
    const field = firstFieldError(body.errors);
    return { kind: "permanent", reason: field ? `${reason}: ${field}` : reason, code: "invalid_form_body" };
  }
  return undefined;
}
