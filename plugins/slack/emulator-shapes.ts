/**
 * What the Slack emulator keeps (files uploaded, messages posted) and how it shows them, in the shapes of
 * Slack's answers (a channel of conversations.info, a file of files.info with its shares, a message of
 * conversations.history), as `@slack/web-api` types them.
 */
import type { FilesInfoResponse } from "@slack/web-api";
import { BOT, TEAM, type Channel } from "./emulator-oauth.ts";

type FileShares = NonNullable<NonNullable<FilesInfoResponse["file"]>["shares"]>;

export interface Upload {
  id: string;
  token: string;
  name: string;
  length: number;
  alt?: string;
  bytes: Uint8Array | null;
  mime: string | null;
  title?: string;
  shares: { channel: string; ts: string; thread_ts?: string }[];
}

export interface Message {
  ts: string;
  channel: string;
  text: string;
  thread_ts?: string;
  files: string[];
  reply_count: number;
  reactions: number;
}

/** What the shapes read of the emulator's state. */
export interface ShapeState {
  channels: Record<string, Channel>;
  uploads: Map<string, Upload>;
}

export function shapes(state: ShapeState) {
  const channelJson = (c: Channel, members: boolean) => ({
    id: c.id,
    name: c.name,
    is_channel: !c.is_private,
    is_group: c.is_private,
    is_private: c.is_private,
    is_member: c.is_member,
    is_archived: c.is_archived,
    ...(members && { num_members: c.num_members }),
  });

  /** Records a message; a reply counts on its thread's root (a reply's ts given as thread_ts means its root). */
  /** Where a file is shared: the messages holding it, by channel, under public or private (files.info). */
  function sharesOf(f: Upload): FileShares {
    const shares: FileShares = {};
    for (const s of f.shares) {
      const kind = state.channels[s.channel]?.is_private ? "private" : "public";
      const byChannel = (shares[kind] ??= {});
      (byChannel[s.channel] ??= []).push({ ts: s.ts, ...(s.thread_ts && { thread_ts: s.thread_ts }) });
    }
    return shares;
  }

  const fileJson = (f: Upload) => ({
    id: f.id,
    name: f.name,
    title: f.title ?? f.name,
    mimetype: f.mime ?? "application/octet-stream",
    size: f.length,
    ...(f.alt && { alt_txt: f.alt }),
    url_private: `https://files.slack.com/files-pri/${TEAM.id}-${f.id}/${encodeURIComponent(f.name)}`,
    shares: sharesOf(f),
  });

  const messageJson = (m: Message) => ({
    type: "message",
    ...(m.files.length && { subtype: "file_share" }),
    user: BOT.user_id,
    bot_id: BOT.bot_id,
    text: m.text,
    ts: m.ts,
    ...(m.thread_ts && { thread_ts: m.thread_ts }),
    ...(m.reply_count && { thread_ts: m.ts, reply_count: m.reply_count }),
    ...(m.reactions && { reactions: [{ name: "thumbsup", count: m.reactions, users: [] }] }),
    ...(m.files.length && { files: m.files.map((id) => fileJson(state.uploads.get(id)!)) }),
  });

  return { channelJson, fileJson, messageJson };
}
