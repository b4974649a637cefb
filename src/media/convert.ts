/**
 * Makes the copy of a media file a platform needs (src/platform/host/media-plan.ts says what it must be):
 * images with sharp, video with ffmpeg. Bounded: a process runs at most MEDIA_CONVERT_CONCURRENCY
 * conversions at once, sharp works on one thread per image and ffmpeg on a few, and every temporary file
 * is removed when the conversion ends.
 */
import { mkdirSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MediaFacts, VideoFacts } from "../domain/media-facts.ts";
import type { OutputSpec } from "../platform/host/media-plan.ts";
import { insertCoverFrame } from "./cover-frame.ts";
import { sharp, type VideoTools } from "./tools.ts";

/** The file could not be converted: a permanent error that names why. */
export class ConversionFailed extends Error {}

/** A counting semaphore: at most `capacity` holders at once, the others wait in order. */
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(public capacity: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.capacity) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` never drops below what runs.
      if (next) next();
      else this.active--;
    }
  }
}

/** One gate per process: copies in one process (tests) share the machine's cores as separate processes would not. */
const gate = new Gate(1);

/** ffmpeg threads per conversion: enough to be quick, few enough to leave the server its cores. */
const FFMPEG_THREADS = "2";
/** A video conversion that runs this long is stuck (a pathological file): it is stopped and fails. */
const FFMPEG_TIMEOUT_MS = 30 * 60_000;

export interface ConvertOptions {
  /** Conversions this process runs at once (MEDIA_CONVERT_CONCURRENCY). */
  concurrency: number;
  tools: VideoTools;
}

/** A folder for one conversion's files, removed by the caller. */
export async function tempFolder(root?: string): Promise<string> {
  if (root) {
    try {
      mkdirSync(root, { recursive: true });
      return await mkdtemp(join(root, "convert-"));
    } catch {
      // A read-only or full data directory: the system's temporary folder instead.
    }
  }
  return mkdtemp(join(tmpdir(), "crier-convert-"));
}

/**
 * Converts the file at `source` (a local path; a URL for video) described by `facts` into `outPath`, as
 * `spec` says. Waits for a free conversion slot first. Throws ConversionFailed when it cannot be done.
 */
export async function convertFile(
  source: string,
  facts: MediaFacts,
  spec: OutputSpec & { coverPath?: string },
  outPath: string,
  opts: ConvertOptions,
): Promise<void> {
  gate.capacity = Math.max(1, opts.concurrency);
  await gate.run(async () => {
    if (spec.coverPath && facts.kind === "video") {
      // The cover frame re-encodes the whole video to H.264 + AAC MP4 anyway: one pass does both.
      await insertCoverFrame(opts.tools, source, spec.coverPath, outPath).catch((e: Error) => {
        throw new ConversionFailed(e.message);
      });
    } else if (facts.kind === "image") await convertImage(source, facts, spec, outPath);
    else await convertVideo(source, facts, spec, outPath, opts.tools);
  });
}

/** The scale (≤ 1) that fits width × height within the spec's maximum dimensions. */
export function fitScale(width: number, height: number, spec: OutputSpec): number {
  let s = 1;
  if (spec.maxWidth) s = Math.min(s, spec.maxWidth / width);
  if (spec.maxHeight) s = Math.min(s, spec.maxHeight / height);
  if (spec.maxPixels) s = Math.min(s, Math.sqrt(spec.maxPixels / (width * height)));
  return s;
}

/** JPEG qualities tried in turn until the file is under its byte limit; then the picture shrinks. */
const QUALITIES = [85, 75, 65, 55, 45];
const MAX_SHRINKS = 6;

/**
 * An image: the EXIF orientation applied, shrunk to fit, encoded as the spec's type (JPEG stepping its
 * quality down, then its size, until it is under maxBytes), metadata left out but the ICC profile kept
 * (colours stay right) unless the spec keeps metadata.
 */
export async function convertImage(
  source: string,
  facts: MediaFacts & { kind: "image" },
  spec: OutputSpec,
  outPath: string,
) {
  const lib = await sharp();
  let scale = fitScale(facts.width, facts.height, spec);
  for (let shrink = 0; shrink <= MAX_SHRINKS; shrink++) {
    const width = Math.max(1, Math.floor(facts.width * scale));
    const height = Math.max(1, Math.floor(facts.height * scale));
    const qualities = spec.contentType === "image/jpeg" ? QUALITIES : [90];
    let size = 0;
    for (const quality of qualities) {
      let img = lib(source, { failOn: "error", animated: spec.contentType === "image/gif" }).rotate();
      if (scale < 1) img = img.resize(width, height, { fit: "inside" });
      img = spec.stripMetadata ? img.keepIccProfile() : img.keepMetadata();
      if (spec.contentType === "image/jpeg") img = img.flatten({ background: "#ffffff" }).jpeg({ quality });
      else if (spec.contentType === "image/png") img = img.png({ compressionLevel: 9 });
      else if (spec.contentType === "image/webp") img = img.webp({ quality });
      else if (spec.contentType === "image/gif") img = img.gif();
      else throw new ConversionFailed(`Crier cannot write ${spec.contentType} images`);
      try {
        size = (await img.toFile(outPath)).size;
      } catch (e) {
        throw new ConversionFailed(`the image could not be converted (${(e as Error).message})`);
      }
      if (!spec.maxBytes || size <= spec.maxBytes) return;
    }
    // Still too large at the lowest quality: fewer pixels, by the area the bytes are over (and a margin).
    scale *= Math.min(0.9, Math.sqrt(spec.maxBytes! / size) * 0.95);
  }
  throw new ConversionFailed(`the image stays over ${spec.maxBytes} bytes even shrunk to a fraction of its size`);
}

const H264_AUDIO = new Set(["aac", "mp3"]);

/** Whether a video can go into the output by copying its streams (no re-encoding). */
export function remuxable(facts: VideoFacts, spec: OutputSpec): boolean {
  if (spec.maxWidth || spec.maxHeight) return false;
  if (spec.contentType !== "video/mp4") return true; // only its tags change (MOV or WebM kept as they are)
  return facts.video_codec === "h264" && (facts.audio_codec === null || H264_AUDIO.has(facts.audio_codec));
}

/** The ffmpeg arguments that make `outPath` from `source` (exported for the benchmark's bare run). */
export function ffmpegArgs(source: string, facts: VideoFacts, spec: OutputSpec, outPath: string): string[] {
  const args = ["-v", "error", "-nostdin", "-y", "-threads", FFMPEG_THREADS, "-i", source];
  args.push("-map", "0:v:0", "-map", "0:a:0?");
  if (remuxable(facts, spec)) args.push("-c", "copy");
  else {
    // ffmpeg applies the rotation while decoding, so the picture comes out upright with no rotation tag.
    const w = spec.maxWidth ? `min(iw\\,${spec.maxWidth})` : "iw";
    const h = spec.maxHeight ? `min(ih\\,${spec.maxHeight})` : "ih";
    const fit = spec.maxWidth || spec.maxHeight ? ":force_original_aspect_ratio=decrease" : "";
    args.push(
      "-vf",
      `scale=w='${w}':h='${h}'${fit}:force_divisible_by=2`,
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-crf",
      "23",
      "-pix_fmt",
      "yuv420p",
      "-c:a",
      "aac",
      "-b:a",
      "128k",
      "-threads",
      FFMPEG_THREADS,
    );
  }
  if (spec.contentType === "video/mp4" || spec.contentType === "video/quicktime") args.push("-movflags", "+faststart");
  if (spec.stripMetadata) args.push("-map_metadata", "-1");
  args.push(outPath);
  return args;
}

/** A video: to MP4 (H.264 and AAC, faststart) when it must change, or its streams copied without its tags. */
export async function convertVideo(
  source: string,
  facts: VideoFacts,
  spec: OutputSpec,
  outPath: string,
  tools: VideoTools,
) {
  if (!tools.ffmpeg) throw new ConversionFailed("ffmpeg is not installed on the server");
  const proc = Bun.spawn([tools.ffmpeg, ...ffmpegArgs(source, facts, spec, outPath)], {
    stdout: "ignore",
    stderr: "pipe",
    stdin: "ignore",
  });
  const timer = setTimeout(() => proc.kill(), FFMPEG_TIMEOUT_MS);
  try {
    const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) {
      await rm(outPath, { force: true });
      const line = err.trim().split("\n").pop() || (proc.signalCode ? `stopped (${proc.signalCode})` : `exit ${code}`);
      throw new ConversionFailed(`ffmpeg could not convert the video (${line.slice(0, 300)})`);
    }
  } finally {
    clearTimeout(timer);
  }
  if (!(await stat(outPath).catch(() => null))?.size) throw new ConversionFailed("ffmpeg wrote an empty file");
}
