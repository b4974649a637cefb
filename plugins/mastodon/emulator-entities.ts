/**
 * The Mastodon emulator's records and the entities it answers with, in the API's shapes
 * (docs.joinmastodon.org/entities/Account, MediaAttachment, Status; read 2026-11-26), checked against
 * masto's declarations (contract.ts) where they are built.
 */
import type { AccountEntity, StatusEntity } from "./contract.ts";
import { renderHtml, type StatusInput } from "./emulator-rules.ts";

/** The emulator's one user. */
export const USER = { id: "109", username: "sandbox" };

export interface App {
  name: string;
  clientId: string;
  secret: string;
  redirectUris: string[];
  scopes: string[];
}

export interface Media {
  id: string;
  type: "image" | "video" | "gifv";
  contentType: string;
  size: number;
  description: string | null;
  /** GET /api/v1/media/:id calls still answering 206 before it is processed. */
  pendingReads: number;
  statusId: string | null;
}

export interface Status {
  id: string;
  input: StatusInput;
  media: string[];
  createdAt: string;
  counts: { favourites: number; reblogs: number; replies: number };
}

export function accountJson(base: string, followers: number, statuses: number) {
  return {
    id: USER.id,
    username: USER.username,
    acct: USER.username,
    display_name: "Sandbox",
    url: `${base}/@${USER.username}`,
    avatar: `${base}/avatars/original/missing.png`,
    followers_count: followers,
    following_count: 0,
    statuses_count: statuses,
    created_at: "2026-01-01T00:00:00.000Z",
  } satisfies Partial<AccountEntity>;
}

/** A file as GET /api/v1/media/:id shows it: no url until it is processed. */
export function mediaEntity(m: Media, base: string) {
  const ready = m.pendingReads <= 0 || m.type === "image";
  return {
    id: m.id,
    type: m.type,
    url: ready ? `${base}/system/media_attachments/${m.id}/original` : null,
    preview_url: `${base}/system/media_attachments/${m.id}/small`,
    remote_url: null,
    description: m.description,
    meta: {},
    blurhash: null,
  };
}

export function statusEntity(
  st: Status,
  base: string,
  media: Record<string, Media>,
  account: ReturnType<typeof accountJson>,
) {
  const poll = st.input.poll;
  return {
    id: st.id,
    uri: `${base}/users/${USER.username}/statuses/${st.id}`,
    url: `${base}/@${USER.username}/${st.id}`,
    created_at: st.createdAt,
    in_reply_to_id: st.input.inReplyTo,
    in_reply_to_account_id: st.input.inReplyTo ? USER.id : null,
    sensitive: st.input.sensitive,
    spoiler_text: st.input.spoiler,
    visibility: st.input.visibility as StatusEntity["visibility"],
    language: st.input.language,
    content: renderHtml(st.input.status),
    replies_count: st.counts.replies,
    reblogs_count: st.counts.reblogs,
    favourites_count: st.counts.favourites,
    account,
    media_attachments: st.media.map((id) => mediaEntity(media[id], base)),
    poll: poll && {
      id: `${st.id}0`,
      expires_at: new Date(Date.parse(st.createdAt) + poll.expires_in * 1000).toISOString(),
      expired: false,
      multiple: poll.multiple,
      votes_count: 0,
      options: poll.options.map((title) => ({ title, votes_count: poll.hide_totals ? null : 0 })),
    },
    reblog: null,
  } satisfies Partial<Record<keyof StatusEntity, unknown>>;
}
