/**
 * What the Mastodon emulator refuses, written from Mastodon's documentation and not from the adapter
 * (docs.joinmastodon.org, read 2026-11-26): the server's configuration as GET /api/v2/instance shows it,
 * how a status's length is counted (user/posting: links 23 characters, a remote mention by its username
 * only; the content warning counts too, StatusLengthValidator), the scopes (api/oauth-scopes), and the
 * validation errors of POST /api/v1/statuses and POST /api/v2/media.
 */

/** The configuration a server states (entities/Instance#configuration); the emulator's defaults are Mastodon's. */
export interface EmulatedConfiguration {
  statuses: { max_characters: number; max_media_attachments: number; characters_reserved_per_url: number };
  media_attachments: {
    supported_mime_types: string[];
    description_limit: number;
    image_size_limit: number;
    image_matrix_limit: number;
    video_size_limit: number;
    video_frame_rate_limit: number;
    video_matrix_limit: number;
  };
  polls: { max_options: number; max_characters_per_option: number; min_expiration: number; max_expiration: number };
}

export const defaultConfiguration = (): EmulatedConfiguration => ({
  statuses: { max_characters: 500, max_media_attachments: 4, characters_reserved_per_url: 23 },
  media_attachments: {
    supported_mime_types: [
      "image/jpeg",
      "image/png",
      "image/gif",
      "image/heic",
      "image/heif",
      "image/webp",
      "image/avif",
      "video/webm",
      "video/mp4",
      "video/quicktime",
      "video/ogg",
    ],
    description_limit: 1500,
    image_size_limit: 16_777_216,
    image_matrix_limit: 33_177_600,
    video_size_limit: 103_809_024,
    video_frame_rate_limit: 120,
    video_matrix_limit: 8_294_400,
  },
  polls: { max_options: 4, max_characters_per_option: 50, min_expiration: 300, max_expiration: 2_629_746 },
});

/** The scopes a server knows (api/oauth-scopes); a top-level scope grants every scope under it. */
export const KNOWN_SCOPES = [
  "read",
  "write",
  "follow",
  "push",
  "profile",
  "read:accounts",
  "read:statuses",
  "read:notifications",
  "write:statuses",
  "write:media",
  "write:accounts",
];

export const scopeCovers = (granted: string[], needed: string) =>
  granted.includes(needed) || granted.includes(needed.split(":")[0]);

/** A refusal in Mastodon's error shape: `{ "error": "…" }` with its status. */
export class MastodonError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly description?: string,
  ) {
    super(message);
  }
}

const segments = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const LINK = /https?:\/\/[^\s<>"]+/g;
const REMOTE = /@([A-Za-z0-9_]+(?:[.-][A-Za-z0-9_]+)*)@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

/** The status's length as the server counts it. */
export function countedLength(text: string, spoiler: string, reserved: number): number {
  const counted = text.replace(LINK, "x".repeat(reserved)).replace(REMOTE, "@$1");
  return [...segments.segment(spoiler + counted)].length;
}

/** A request's parameters, from JSON or a form (Rails takes both; arrays as name[] in forms). */
export async function params(req: Request): Promise<Record<string, unknown>> {
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("json")) {
    try {
      return ((await req.json()) ?? {}) as Record<string, unknown>;
    } catch {
      throw new MastodonError(400, "Error while parsing the request body");
    }
  }
  const form = type.startsWith("multipart/") ? await req.formData() : new URLSearchParams(await req.text());
  const out: Record<string, unknown> = {};
  for (const [k, v] of form.entries()) {
    const m = /^(\w+)\[(\w*)\](?:\[\])?$/.exec(k);
    if (k.endsWith("[]") && !m?.[2]) ((out[k.slice(0, -2)] ??= []) as unknown[]).push(v);
    else if (m && m[2]) {
      const o = (out[m[1]] ??= {}) as Record<string, unknown>;
      if (k.endsWith("[]")) ((o[m[2]] ??= []) as unknown[]).push(v);
      else o[m[2]] = v;
    } else out[k] = v;
  }
  return out;
}

const VISIBILITIES = ["public", "unlisted", "private", "direct"];

export interface StatusInput {
  status: string;
  spoiler: string;
  mediaIds: string[];
  poll: { options: string[]; expires_in: number; multiple: boolean; hide_totals: boolean } | null;
  visibility: string;
  language: string | null;
  inReplyTo: string | null;
  sensitive: boolean;
}

const truthy = (v: unknown) => v === true || v === "true" || v === "1";

/** POST /api/v1/statuses' parameters checked as the server checks them (422 "Validation failed: …"). */
export function statusInput(p: Record<string, unknown>, conf: EmulatedConfiguration): StatusInput {
  const status = typeof p.status === "string" ? p.status : "";
  const spoiler = typeof p.spoiler_text === "string" ? p.spoiler_text : "";
  const mediaIds = Array.isArray(p.media_ids) ? p.media_ids.map(String) : [];
  const rawPoll = p.poll as
    { options?: unknown; expires_in?: unknown; multiple?: unknown; hide_totals?: unknown } | undefined;
  if (mediaIds.length > conf.statuses.max_media_attachments || (mediaIds.length && rawPoll))
    throw new MastodonError(422, "Validation failed: Cannot attach more than 4 files or a poll together with files");
  if (!status.trim() && !mediaIds.length) throw new MastodonError(422, "Validation failed: Text can't be blank");
  const length = countedLength(status, spoiler, conf.statuses.characters_reserved_per_url);
  if (length > conf.statuses.max_characters)
    throw new MastodonError(422, `Validation failed: Text character limit of ${conf.statuses.max_characters} exceeded`);
  const visibility = typeof p.visibility === "string" && p.visibility ? p.visibility : "public";
  if (!VISIBILITIES.includes(visibility))
    throw new MastodonError(422, `Validation failed: Visibility is not included in the list`);
  const language = typeof p.language === "string" && p.language ? p.language : null;
  if (language !== null && !/^[a-z]{2,3}$/.test(language))
    throw new MastodonError(422, "Validation failed: Language is not a valid ISO 639 code");
  let poll: StatusInput["poll"] = null;
  if (rawPoll) {
    const options = Array.isArray(rawPoll.options) ? rawPoll.options.map(String) : [];
    const expires = Number(rawPoll.expires_in);
    const c = conf.polls;
    if (options.length < 2) throw new MastodonError(422, "Validation failed: Poll must have at least 2 options");
    if (options.length > c.max_options)
      throw new MastodonError(422, `Validation failed: Poll cannot contain more than ${c.max_options} items`);
    if (options.some((o) => [...segments.segment(o)].length > c.max_characters_per_option))
      throw new MastodonError(
        422,
        `Validation failed: Poll contains an item longer than ${c.max_characters_per_option} characters`,
      );
    if (!Number.isInteger(expires) || expires < c.min_expiration || expires > c.max_expiration)
      throw new MastodonError(422, "Validation failed: Poll expiration is out of range");
    poll = {
      options,
      expires_in: expires,
      multiple: truthy(rawPoll.multiple),
      hide_totals: truthy(rawPoll.hide_totals),
    };
  }
  return {
    status,
    spoiler,
    mediaIds,
    poll,
    visibility,
    language,
    inReplyTo: typeof p.in_reply_to_id === "string" && p.in_reply_to_id ? p.in_reply_to_id : null,
    sensitive: truthy(p.sensitive) || spoiler.length > 0,
  };
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** A status's text as the server renders it: paragraphs, line breaks, links. */
export function renderHtml(text: string): string {
  return text
    .split(/\n{2,}/)
    .map(
      (para) =>
        `<p>${escapeHtml(para)
          .replace(/https?:\/\/[^\s<>"&]+/g, (u) => `<a href="${u}" rel="nofollow noopener" target="_blank">${u}</a>`)
          .replace(/\n/g, "<br />")}</p>`,
    )
    .join("");
}
