/**
 * Converted copies of a media (renditions), made once per media and output however many targets, posts
 * or copies of Crier ask for them. The media_renditions row is the lock: the copy whose insert wins
 * converts under a lease it renews while it works; the others wait for the row to turn ready or failed,
 * and take the work over if the lease runs out (the copy converting it died).
 */
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { AppContext } from "../context.ts";
import { mediaRenditions } from "../db/schema.ts";
import type { MediaFacts } from "../domain/media-facts.ts";
import { outputExtension, variantKey, type OutputSpec } from "../platform/host/media-plan.ts";
import { createMediaAccess } from "../platform/host/media-guard.ts";
import { MediaError } from "../platform/sdk.ts";
import { derivedKey } from "../storage/keys.ts";
import { ConversionFailed, convertFile, tempFolder } from "./convert.ts";
import type { OwnMedia } from "./own.ts";
import { probe, UnreadableMedia } from "./probe.ts";
import { videoTools } from "./tools.ts";

export interface Rendition {
  key: string;
  url: string;
  contentType: string;
  size: number;
  facts: MediaFacts | null;
}

/** A rendition that cannot be made: permanent for every target that needs it. */
export class RenditionFailed extends Error {}

/** How long a converting copy holds a rendition without renewing; renewed every third of it. */
const LEASE_MS = 5 * 60_000;
const POLL_MS = 200;

type Ctx = Pick<AppContext, "db" | "storage" | "clock" | "config" | "log">;

/** Reads what the probe would have stored on the media row when it is not there yet. */
export async function factsOf(ctx: Ctx, m: OwnMedia): Promise<MediaFacts | null> {
  if (m.facts) return m.facts;
  const kind = m.contentType.startsWith("video/") ? "video" : "image";
  const location = await ctx.storage.probeLocation(m.path);
  return probe(
    kind,
    {
      location,
      bytes: async () => {
        const opened = await ctx.storage.open(m.path);
        if (!opened) throw new UnreadableMedia("the file is no longer in storage");
        return new Uint8Array(await new Response(opened.stream()).arrayBuffer());
      },
    },
    videoTools(ctx.config),
  );
}

/**
 * The rendition of `m` that `spec` describes: the stored one, or one made now (by this copy, or by
 * another that is already at it). Throws RenditionFailed when it cannot be made (then or before).
 */
export async function renditionOf(ctx: Ctx, m: OwnMedia, facts: MediaFacts, spec: OutputSpec): Promise<Rendition> {
  const variant = variantKey(spec);
  for (;;) {
    const now = ctx.clock.now();
    const lease = new Date(now.getTime() + LEASE_MS);
    const [won] = await ctx.db.db
      .insert(mediaRenditions)
      .values({ mediaId: m.id, variant, status: "pending", leaseUntil: lease })
      .onConflictDoNothing()
      .returning({ variant: mediaRenditions.variant });
    if (won) return make(ctx, m, facts, spec, variant);
    const [row] = await ctx.db.db
      .select()
      .from(mediaRenditions)
      .where(and(eq(mediaRenditions.mediaId, m.id), eq(mediaRenditions.variant, variant)));
    if (!row) continue; // removed meanwhile: try the insert again
    if (row.status === "ready" && row.path)
      return {
        key: row.path,
        url: await ctx.storage.publicUrl(row.path),
        contentType: row.contentType ?? spec.contentType,
        size: row.sizeBytes ?? 0,
        facts: row.facts,
      };
    if (row.status === "failed") throw new RenditionFailed(row.error ?? "the conversion failed");
    // Pending: another copy converts it. Its lease ran out: it died, so this copy takes the work over.
    const [taken] = await ctx.db.db
      .update(mediaRenditions)
      .set({ leaseUntil: lease, updatedAt: now })
      .where(
        and(
          eq(mediaRenditions.mediaId, m.id),
          eq(mediaRenditions.variant, variant),
          eq(mediaRenditions.status, "pending"),
          lt(mediaRenditions.leaseUntil, now),
        ),
      )
      .returning({ variant: mediaRenditions.variant });
    if (taken) return make(ctx, m, facts, spec, variant);
    await Bun.sleep(POLL_MS);
  }
}

/** Converts, stores and marks ready (or failed) the rendition this copy holds the lease of. */
async function make(ctx: Ctx, m: OwnMedia, facts: MediaFacts, spec: OutputSpec, variant: string): Promise<Rendition> {
  const where = and(eq(mediaRenditions.mediaId, m.id), eq(mediaRenditions.variant, variant));
  const renew = setInterval(() => {
    const until = new Date(ctx.clock.now().getTime() + LEASE_MS);
    void ctx.db.db
      .update(mediaRenditions)
      .set({ leaseUntil: until })
      .where(where)
      .catch(() => {});
  }, LEASE_MS / 3);
  const dir = await tempFolder(join(ctx.config.dataDir, "tmp"));
  try {
    const key = derivedKey(m.path, variant, outputExtension(spec));
    const out = join(dir, `out.${outputExtension(spec)}`);
    try {
      const source = await localSource(ctx, m, facts, dir);
      const coverPath = spec.coverUrl ? await downloadCover(ctx, spec.coverUrl, dir) : undefined;
      await convertFile(source, facts, { ...spec, coverPath }, out, {
        concurrency: ctx.config.mediaConvertConcurrency,
        tools: videoTools(ctx.config),
      });
    } catch (e) {
      if (!(e instanceof ConversionFailed || e instanceof UnreadableMedia)) throw e;
      const error = `${m.filename}: ${e.message}`;
      await ctx.db.db
        .update(mediaRenditions)
        .set({ status: "failed", error, leaseUntil: null, updatedAt: ctx.clock.now() })
        .where(where);
      throw new RenditionFailed(error);
    }
    const made = await probe(facts.kind, { location: out }, videoTools(ctx.config)).catch(() => null);
    const info = await ctx.storage.put(key, out);
    await ctx.db.db
      .update(mediaRenditions)
      .set({
        status: "ready",
        path: key,
        contentType: spec.contentType,
        sizeBytes: info.size,
        facts: made,
        error: null,
        leaseUntil: null,
        updatedAt: ctx.clock.now(),
      })
      .where(where);
    ctx.log.info("media converted", { media_id: m.id, variant, bytes: info.size });
    return { key, url: await ctx.storage.publicUrl(key), contentType: spec.contentType, size: info.size, facts: made };
  } catch (e) {
    // Anything else (the store full or away, the database gone) may pass: the lease is let go so a later
    // attempt, here or on another copy, makes it again.
    if (!(e instanceof RenditionFailed))
      await ctx.db.db
        .update(mediaRenditions)
        .set({ leaseUntil: new Date(0) })
        .where(and(where, eq(mediaRenditions.status, "pending")))
        .catch(() => {});
    throw e;
  } finally {
    clearInterval(renew);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The original where a converter can read it: a local file (fs, or an image copied out of S3) or, for a
 * video in S3, a short-lived URL ffmpeg streams from.
 */
async function localSource(ctx: Ctx, m: OwnMedia, facts: MediaFacts, dir: string): Promise<string> {
  const location = await ctx.storage.probeLocation(m.path);
  if (!/^https?:\/\//.test(location) || facts.kind === "video") return location;
  const opened = await ctx.storage.open(m.path);
  if (!opened) throw new UnreadableMedia("the file is no longer in storage");
  const file = join(dir, "source");
  await Bun.write(file, new Response(opened.stream()));
  return file;
}

/** The most a cover image may weigh (spec: thumbnail_url is a JPEG or PNG of 8 MB or less). */
const COVER_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A video's cover image (media[].thumbnail_url) in a local file: Crier's own upload read from storage,
 * anything else fetched through the media guard (never from a private address). A cover that cannot be
 * had fails the conversion, naming why.
 */
async function downloadCover(ctx: Ctx, url: string, dir: string): Promise<string> {
  const access = createMediaAccess({ ownStorage: ctx.storage, maxBytes: COVER_MAX_BYTES, timeoutMs: 60_000 });
  const file = join(dir, "cover");
  try {
    const body = await access.open({ url, type: "image" });
    await Bun.write(file, new Response(body.stream()));
  } catch (e) {
    // A cover that may come back later (a timeout) is tried again; one refused for good fails the video.
    if (e instanceof MediaError && !e.retryable)
      throw new ConversionFailed(`its cover ${url} could not be read: ${e.message}`);
    throw e;
  }
  return file;
}

/** Removes the stored files of these media's renditions (before their rows go with the media). */
export async function removeRenditionFiles(
  ctx: Pick<AppContext, "db" | "storage">,
  mediaIds: string[],
): Promise<number> {
  if (!mediaIds.length) return 0;
  const rows = await ctx.db.db
    .select({ path: mediaRenditions.path })
    .from(mediaRenditions)
    .where(and(inArray(mediaRenditions.mediaId, mediaIds), sql`${mediaRenditions.path} is not null`));
  for (const r of rows) await ctx.storage.remove(r.path!);
  return rows.length;
}
