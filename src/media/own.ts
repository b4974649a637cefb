/**
 * Which of a post's media are Crier's own uploads, and what Crier knows of each file. A post may point
 * at any URL; when the URL is one Crier serves, the file's own numbers (read when its upload completed)
 * stand instead of what the client typed. The posts module and the engine both use it, so it imports
 * from neither.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Queryable } from "../db/client.ts";
import { media } from "../db/schema.ts";
import { decodeMediaId } from "../domain/media-ids.ts";
import type { MediaFacts } from "../domain/media-facts.ts";
import type { Storage } from "../storage/storage.ts";

/** One own media file as the checks, the stored post and the conversions see it. */
export interface OwnMedia {
  id: string;
  /** The storage key of the original. */
  path: string;
  filename: string;
  /** What the probe read; null for a file uploaded before files were probed. */
  facts: MediaFacts | null;
  size: number;
  contentType: string;
  /** The numbers a post's media item gets: the probe's, else what the upload recorded on the row. */
  width: number | null;
  height: number | null;
  duration: number | null;
}

/**
 * For each URL, the own media it serves in this profile (uploaded, not expired away), or null when the
 * URL is not ours, names no media of this profile, or its upload never completed. One read for all.
 */
export async function ownMediaOf(
  deps: { db: Queryable; storage: Storage },
  profileId: string,
  urls: string[],
): Promise<(OwnMedia | null)[]> {
  const ids = await Promise.all(
    urls.map(async (url) => {
      const key = await deps.storage.keyForPublicUrl(url);
      // The key is `med_<id>.<ext>`, or `med_<id>~<variant>.<ext>` for a file made from it (not an upload).
      const name = key?.slice(0, key.indexOf("."));
      return name && !name.includes("~") ? decodeMediaId(name) : null;
    }),
  );
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (!wanted.length) return urls.map(() => null);
  const rows = await deps.db
    .select()
    .from(media)
    .where(and(inArray(media.id, wanted), eq(media.profileId, profileId), eq(media.status, "uploaded")));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const row = id ? byId.get(id) : undefined;
    if (!row) return null;
    const facts = row.facts ?? null;
    const video = facts?.kind === "video" ? facts : null;
    return {
      id: row.id,
      path: row.path,
      filename: row.filename,
      facts,
      size: row.sizeBytes ?? 0,
      contentType: row.contentType,
      width: facts ? facts.width : row.width,
      height: facts ? facts.height : row.height,
      duration: facts ? (video?.duration ?? null) : row.durationSeconds,
    };
  });
}

/**
 * The media items with each own file's numbers in place of the client's (the client's stand only for
 * files that are not ours), and the facts the checks compare, parallel to the items (null: not ours).
 */
export function withOwnNumbers<T extends { width?: number; height?: number; duration?: number; size?: number }>(
  items: T[],
  own: (OwnMedia | null)[],
): { items: T[]; facts: ({ facts: MediaFacts | null; size: number; contentType: string } | null)[] } {
  return {
    items: items.map((item, i) => {
      const o = own[i];
      if (!o) return item;
      const next: T = { ...item, size: o.size };
      // A number the file does not tell (a video without a video stream) is left out, never guessed.
      for (const [k, v] of [
        ["width", o.width],
        ["height", o.height],
        ["duration", o.duration],
      ] as const) {
        if (v == null) delete next[k];
        else next[k] = v as T[typeof k];
      }
      return next;
    }),
    facts: own.map((o) => (o ? { facts: o.facts, size: o.size, contentType: o.contentType } : null)),
  };
}
