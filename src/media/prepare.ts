/**
 * A job's media made ready for its platform just before the plugin runs: each of Crier's own files gets
 * its numbers from the probe, and where the platform needs another file (another format, fewer bytes or
 * pixels, no location in its metadata) the item points at a converted copy instead.
 */
import type { AppContext } from "../context.ts";
import type { MediaFacts } from "../domain/media-facts.ts";
import { planMedia } from "../platform/host/media-plan.ts";
import { optionsForPlugin } from "../platform/host/options.ts";
import type { MediaItem, Plugin } from "../platform/sdk.ts";
import { ownMediaOf, type OwnMedia } from "./own.ts";
import { UnreadableMedia } from "./probe.ts";
import { factsOf, renditionOf, RenditionFailed } from "./renditions.ts";
import { videoTools } from "./tools.ts";

export type PreparedMedia =
  | { kind: "ready"; media: MediaItem[] }
  /** The file cannot go to this platform: the target fails, naming the file and why. */
  | { kind: "failed"; code: string; reason: string }
  /** Something that may pass (the store away): the attempt is tried again later. */
  | { kind: "retry"; reason: string };

type Ctx = Pick<AppContext, "db" | "storage" | "clock" | "config" | "log">;

export interface PrepareOptions {
  /**
   * The target picks its cover another way (TikTok's video_cover_timestamp_ms, which the spec says wins
   * over media[].thumbnail_url): no cover frame is put in front of the video.
   */
  coverChosen?: boolean;
}

/** What a target's platform_options say about preparing its media, the same at publish and ahead of it. */
export function prepareOptionsFor(plugin: Plugin, platformOptions: unknown): PrepareOptions {
  const options = optionsForPlugin(plugin, platformOptions as Record<string, unknown> | null);
  return { coverChosen: options.video_cover_timestamp_ms !== undefined };
}

/** The cover to put in front of this video as its first frame, or null (see OutputSpec.coverUrl). */
function coverFrameOf(plugin: Plugin, item: MediaItem, opts: PrepareOptions): string | null {
  const thumbnail = plugin.mediaRequirements.thumbnail as { insert_as_first_frame?: boolean } | null;
  if (item.type !== "video" || !item.thumbnail_url || opts.coverChosen || !thumbnail?.insert_as_first_frame)
    return null;
  return item.thumbnail_url;
}

/**
 * A video's cover (media[].thumbnail_url) in a format the platform's cover takes (declaration:
 * thumbnail.formats): one of Crier's own images in another format (a PNG for Instagram, whose cover_url
 * takes JPEG) is replaced by a JPEG copy, made once. Covers on other hosts go as they are.
 */
async function coverInFormat(
  ctx: Ctx,
  profileId: string,
  plugin: Plugin,
  item: MediaItem,
  i: number,
): Promise<{ kind: "ready"; item: MediaItem } | Exclude<PreparedMedia, { kind: "ready" }>> {
  const thumbnail = plugin.mediaRequirements.thumbnail as { formats?: string[]; max_size_bytes?: number } | null;
  if (item.type !== "video" || !item.thumbnail_url || !thumbnail?.formats?.length) return { kind: "ready", item };
  const [cover] = await ownMediaOf({ db: ctx.db.db, storage: ctx.storage }, profileId, [item.thumbnail_url]);
  if (!cover || thumbnail.formats.includes(cover.contentType) || !thumbnail.formats.includes("image/jpeg"))
    return { kind: "ready", item };
  const name = `media[${i}].thumbnail_url (${cover.filename})`;
  try {
    const facts = await factsOf(ctx, cover);
    if (facts?.kind !== "image") throw new RenditionFailed("it is not an image");
    const r = await renditionOf(ctx, cover, facts, {
      contentType: "image/jpeg",
      stripMetadata: !ctx.config.keepMediaMetadata,
      ...(thumbnail.max_size_bytes && { maxBytes: thumbnail.max_size_bytes }),
    });
    return { kind: "ready", item: { ...item, thumbnail_url: r.url } };
  } catch (e) {
    if (e instanceof RenditionFailed || e instanceof UnreadableMedia)
      return {
        kind: "failed",
        code: "media_conversion_failed",
        reason: `${name} could not be made a JPEG for ${plugin.displayName}'s cover: ${e.message}`,
      };
    return { kind: "retry", reason: `${name} could not be converted now: ${(e as Error).message}` };
  }
}

const ffmpegFound = (ctx: Ctx) => videoTools(ctx.config).ffmpeg !== null;

/** The numbers a probed file has, for the item a plugin reads. */
function withFacts(item: MediaItem, m: { size: number; facts: MediaFacts | null; contentType: string }): MediaItem {
  const f = m.facts;
  const out: MediaItem = { ...item, mime_type: m.contentType, size: m.size };
  if (f?.width) out.width = f.width;
  if (f?.height) out.height = f.height;
  if (f?.kind === "video" && f.duration) out.duration = f.duration;
  return out;
}

/** The job's media of a target of `profileId` (only that profile's uploads count as Crier's own files). */
export async function prepareJobMedia(
  ctx: Ctx,
  profileId: string,
  plugin: Plugin,
  media: MediaItem[],
  opts: PrepareOptions = {},
): Promise<PreparedMedia> {
  if (!media.length) return { kind: "ready", media };
  const own = await ownMediaOf(
    { db: ctx.db.db, storage: ctx.storage },
    profileId,
    media.map((m) => m.url),
  );
  const out: MediaItem[] = [];
  for (const [i, item] of media.entries()) {
    const m = own[i];
    if (!m) {
      out.push(item);
      continue;
    }
    const done = await prepareOne(ctx, plugin, item, m, i, coverFrameOf(plugin, item, opts));
    if (done.kind !== "ready") return done;
    const cover = await coverInFormat(ctx, profileId, plugin, done.item, i);
    if (cover.kind !== "ready") return cover;
    out.push(cover.item);
  }
  return { kind: "ready", media: out };
}

async function prepareOne(
  ctx: Ctx,
  plugin: Plugin,
  item: MediaItem,
  m: OwnMedia,
  i: number,
  cover: string | null,
): Promise<{ kind: "ready"; item: MediaItem } | Exclude<PreparedMedia, { kind: "ready" }>> {
  const name = `media[${i}] (${m.filename})`;
  let facts: MediaFacts | null;
  try {
    facts = await factsOf(ctx, m);
  } catch (e) {
    // Unreadable files are refused at upload once they are probed there; one that slipped through (an
    // upload from before probing) goes as it is unless it needs converting, and the platform judges it.
    if (e instanceof UnreadableMedia) facts = null;
    else return { kind: "retry", reason: `${name} could not be read from storage: ${(e as Error).message}` };
  }
  const planned = planMedia(
    plugin.mediaRequirements,
    { type: item.type, mime: m.contentType, size: m.size, facts, own: true },
    {
      ffmpeg: ffmpegFound(ctx),
      keepMetadata: ctx.config.keepMediaMetadata,
      displayName: plugin.displayName,
      label: name,
    },
  );
  // A cover frame makes a new video even where the file could go as it is.
  const plan: typeof planned =
    cover && planned.kind !== "refuse" && ffmpegFound(ctx)
      ? {
          kind: "convert",
          output: {
            ...(planned.kind === "convert"
              ? planned.output
              : { contentType: "video/mp4", stripMetadata: !ctx.config.keepMediaMetadata }),
            contentType: "video/mp4",
            coverUrl: cover,
          },
          reasons: [...(planned.kind === "convert" ? planned.reasons : []), "its cover put in as the first frame"],
        }
      : planned;
  if (plan.kind === "as_is") return { kind: "ready", item: withFacts(item, { ...m, facts }) };
  if (plan.kind === "refuse") return { kind: "failed", code: plan.code, reason: `${plan.message} ${plan.hint}` };
  if (!facts)
    return {
      kind: "failed",
      code: "media_conversion_failed",
      reason: `${name} must be converted for ${plugin.displayName} (${plan.reasons.join("; ")}), and Crier cannot read the file to do so (unreadable, or ffprobe is not installed).`,
    };
  try {
    const r = await renditionOf(ctx, m, facts, plan.output);
    const made = withFacts({ ...item, url: r.url }, { size: r.size, facts: r.facts, contentType: r.contentType });
    return { kind: "ready", item: made };
  } catch (e) {
    if (e instanceof RenditionFailed)
      return {
        kind: "failed",
        code: "media_conversion_failed",
        reason: `${name} could not be converted for ${plugin.displayName} (${plan.reasons.join("; ")}): ${e.message}`,
      };
    return { kind: "retry", reason: `${name} could not be converted now: ${(e as Error).message}` };
  }
}
