/**
 * Proof that the person connecting a channel controls it. The bot being an administrator proves only that
 * someone added this server's bot, which every profile of the server shares; so the hosted form shows a
 * one-time code derived from the connect attempt, the user posts it in the channel, and connecting reads
 * the bot's updates for a `channel_post` carrying that code in that very chat. Only an administrator
 * allowed to post can make a channel post, so finding it is the proof.
 *
 * Updates are read with getUpdates (core.telegram.org/bots/api#getupdates, checked 2026-11-26): offset
 * confirms what was read, so readers of one bot compete for its updates. Crier reads them nowhere else
 * (Telegram is not a workflow source and has no analytics that read posts), and within a process every
 * connect shares one reader per bot: reads are serialised, and every code seen in any channel is kept
 * (15 minutes) for the attempt it belongs to, so two people connecting at once never take each other's
 * code. Copies of a server each have their own reader: when two copies read at the same moment, one may
 * take the other's code; that user is told the code was not found and posts it again.
 */
import { createHash } from "node:crypto";
import type { Update } from "@grammyjs/types";
import type { ConnectAttempt, ProviderResult } from "../../src/platform/sdk.ts";

/** Without I, L, O, 0 and 1, which are read wrongly when typed from a screen. */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE = /\bCRIER-[A-Z0-9]{4}-[A-Z0-9]{4}\b/gi;
const SIGHTING_TTL_MS = 15 * 60_000;
/** Bounds one read: 20 pages of 100 updates. What is left waits for the next read. */
const MAX_PAGES = 20;
/** The update kinds that carry channel posts; nothing else is asked for. */
export const ALLOWED_UPDATES = ["channel_post", "edited_channel_post"] as const;

/** The attempt's code, like CRIER-7KQ2-M9XD: the same on every showing of its page, never another attempt's. */
export function proofCode(attempt: ConnectAttempt): string {
  const bytes = createHash("sha256").update(`telegram-channel-proof\n${attempt.secret}`).digest();
  const chars = [...bytes.subarray(0, 8)].map((b) => ALPHABET[b % ALPHABET.length]).join("");
  return `CRIER-${chars.slice(0, 4)}-${chars.slice(4)}`;
}

export interface CodePost {
  chatId: number;
  messageId: number;
  code: string;
  seenAt: number;
}

type Page = (offset: number | undefined) => Promise<ProviderResult<{ ok: true; result: Update[] }>>;

interface Reader {
  /** The read in progress or the last one; each read starts once the one before it ended. */
  chain: Promise<unknown>;
  seen: CodePost[];
}

const readers = new Map<string, Reader>();

/** A refusal of getUpdates, as Telegram gave it. */
export class UpdatesUnreadable extends Error {
  constructor(
    readonly status: number | undefined,
    reason: string,
  ) {
    super(reason);
  }
}

async function readAll(reader: Reader, page: Page, now: number): Promise<void> {
  reader.seen = reader.seen.filter((s) => now - s.seenAt < SIGHTING_TTL_MS);
  let offset: number | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const res = await page(offset);
    if (!res.ok) throw new UpdatesUnreadable(res.status, res.outcome.reason);
    const updates = res.body.result;
    for (const u of updates) {
      const post = u.channel_post ?? u.edited_channel_post;
      const text = post ? `${post.text ?? ""} ${post.caption ?? ""}` : "";
      for (const m of text.matchAll(CODE))
        reader.seen.push({ chatId: post!.chat.id, messageId: post!.message_id, code: m[0].toUpperCase(), seenAt: now });
    }
    // The call after the last update confirms them all; an empty page means nothing is left.
    if (updates.length === 0) return;
    offset = updates[updates.length - 1].update_id + 1;
  }
}

/**
 * Reads the bot's new updates and answers the post of `code` in `chatId`, if one was seen (now or by an
 * earlier read of this process). `key` names the bot (its API base and token).
 */
export async function findCodePost(
  key: string,
  page: Page,
  p: { chatId: number; code: string; now: number },
): Promise<CodePost | undefined> {
  let reader = readers.get(key);
  if (!reader) readers.set(key, (reader = { chain: Promise.resolve(), seen: [] }));
  const r = reader;
  const read = r.chain.then(() => readAll(r, page, p.now));
  r.chain = read.catch(() => undefined);
  await read;
  return r.seen.find((s) => s.chatId === p.chatId && s.code === p.code);
}
