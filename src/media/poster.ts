/**
 * Poster frames: a still of a video that has no cover, made once when its upload completes (with ffmpeg;
 * without it there is no poster and nothing pretends), stored beside the video and shown where a picture
 * of the video is needed (the dashboard, the sandbox inbox, analytics' thumbnail_url).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { media } from "../db/schema.ts";
import { decodeMediaId } from "../domain/media-ids.ts";
import { derivedKey, MEDIA_TYPES, type MediaContentType } from "../storage/keys.ts";
import { videoTools } from "./tools.ts";

/** The longest side of a poster: enough for any preview, small enough to load at once. */
export const POSTER_MAX_SIDE = 1280;

/** Where the poster is taken: a second in, or a tenth of a shorter video (the first frame is often black). */
export function posterTime(durationSeconds: number | null | undefined): number {
  if (!durationSeconds || durationSeconds <= 0) return 0;
  return Math.min(1, durationSeconds / 10);
}

/**
 * Writes one frame of the video at `input` (a path or a URL ffmpeg reads) taken at `atSeconds` as a JPEG
 * at `output`, its longest side at most POSTER_MAX_SIDE, turned as the video is shown. A seek past the
 * last frame yields nothing, so the first frame is taken then.
 */
export async function extractPoster(ffmpeg: string, input: string, output: string, atSeconds: number): Promise<void> {
  const scale = `scale=w='min(${POSTER_MAX_SIDE},iw)':h='min(${POSTER_MAX_SIDE},ih)':force_original_aspect_ratio=decrease`;
  for (const at of atSeconds > 0 ? [atSeconds, 0] : [0]) {
    const args = [ffmpeg, "-v", "error", "-y", "-ss", String(at), "-i", input, "-frames:v", "1", "-vf", scale];
    const proc = Bun.spawn([...args, "-q:v", "3", "-f", "image2", "-c:v", "mjpeg", output], {
      stdout: "ignore",
      stderr: "pipe",
      stdin: "ignore",
    });
    const timer = setTimeout(() => proc.kill(), 60_000);
    const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    clearTimeout(timer);
    if (code === 0 && (await Bun.file(output).exists()) && Bun.file(output).size > 0) return;
    if (at === 0) throw new Error(`ffmpeg made no poster frame (${err.trim().split("\n")[0] || `exit ${code}`})`);
  }
}

type PosterContext = Pick<AppContext, "config" | "storage" | "db">;
type MediaRow = typeof media.$inferSelect;

/**
 * Makes, stores and records the poster frame of a stored video; the poster's key, or null when there is
 * none to make (not a video, no ffmpeg). Throws when ffmpeg or the store fails.
 */
export async function makePoster(ctx: PosterContext, row: MediaRow): Promise<string | null> {
  if (MEDIA_TYPES[row.contentType as MediaContentType]?.kind !== "video") return null;
  const { ffmpeg } = videoTools({ ffmpegPath: ctx.config.ffmpegPath, ffprobePath: ctx.config.ffprobePath });
  if (!ffmpeg) return null;
  const dir = await mkdtemp(join(tmpdir(), "crier-poster-"));
  try {
    const local = join(dir, "poster.jpg");
    const duration = row.facts?.kind === "video" ? row.facts.duration : row.durationSeconds;
    await extractPoster(ffmpeg, await ctx.storage.probeLocation(row.path), local, posterTime(duration));
    const key = derivedKey(row.path, "poster", "jpg");
    await ctx.storage.put(key, local);
    await ctx.db.db.update(media).set({ posterPath: key }).where(eq(media.id, row.id));
    return key;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * makePoster off the request path: the upload's answer never waits for it, and a failure is logged, not
 * an error (the video is as usable without a poster). Returns the work, for callers that want to wait.
 */
export function makePosterLater(ctx: PosterContext & Pick<AppContext, "log">, row: MediaRow): Promise<void> {
  return makePoster(ctx, row).then(
    () => undefined,
    (e) => ctx.log.warn("poster frame not made", { media: row.path, error: (e as Error).message }),
  );
}

/**
 * The public URL of the poster frame of one of our own videos, given the video's public URL; null when
 * the URL is not our media or the media has no poster.
 */
export async function posterUrlFor(ctx: Pick<AppContext, "storage" | "db">, url: string): Promise<string | null> {
  const key = await ctx.storage.keyForPublicUrl(url).catch(() => null);
  const id = key ? decodeMediaId(key.slice(0, key.indexOf(".")).split("~")[0]) : null;
  if (!id) return null;
  const [row] = await ctx.db.db.select({ posterPath: media.posterPath }).from(media).where(eq(media.id, id));
  return row?.posterPath ? ctx.storage.publicUrl(row.posterPath) : null;
}

/**
 * The picture that stands for a media item in previews: its thumbnail_url when the post gave one, else
 * the poster frame of our own video, else null.
 */
export async function previewImageFor(
  ctx: Pick<AppContext, "storage" | "db">,
  item: { url: string; type?: string; thumbnail_url?: string | null },
): Promise<string | null> {
  if (item.thumbnail_url) return item.thumbnail_url;
  return posterUrlFor(ctx, item.url);
}
