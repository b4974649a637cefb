/**
 * Which of a post's media URLs are Crier's own uploads, and what Crier knows of each: the checks at
 * creation and the engine before publishing trust the upload's facts over the client's numbers.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { media } from "../db/schema.ts";
import type { MediaFacts } from "../domain/media-facts.ts";
import { decodeMediaId } from "../modules/media/ids.ts";

/** An uploaded media row, as the checks and the conversions read it. */
export interface OwnMedia {
  id: string;
  /** The storage key of the original. */
  path: string;
  filename: string;
  contentType: string;
  size: number;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  /** null until the file is probed (src/media/probe.ts). */
  facts: MediaFacts | null;
}

const columns = {
  id: media.id,
  path: media.path,
  filename: media.filename,
  contentType: media.contentType,
  size: media.sizeBytes,
  width: media.width,
  height: media.height,
  durationSeconds: media.durationSeconds,
  facts: media.facts,
};

/**
 * For each URL, the uploaded media it is one of our public URLs of, or null (another host, a file made
 * from a media such as a converted copy, a ticket not uploaded yet). One query for all of them.
 */
export async function ownMediaOf(
  ctx: Pick<AppContext, "db" | "storage">,
  urls: string[],
): Promise<(OwnMedia | null)[]> {
  const ids = await Promise.all(
    urls.map(async (url) => {
      const key = await ctx.storage.keyForPublicUrl(url.trim());
      // A derived key (med_…~variant.ext) is a copy Crier made, not an upload.
      return key && !key.includes("~") ? decodeMediaId(key.slice(0, key.indexOf("."))) : null;
    }),
  );
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (!wanted.length) return urls.map(() => null);
  const rows = await ctx.db.db
    .select(columns)
    .from(media)
    .where(and(inArray(media.id, wanted), eq(media.status, "uploaded")));
  const byId = new Map(rows.map((r) => [r.id, { ...r, size: r.size ?? 0 }]));
  return ids.map((id) => (id ? (byId.get(id) ?? null) : null));
}
