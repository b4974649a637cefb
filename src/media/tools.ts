/**
 * The media tools: sharp (libvips, from npm) for images, ffmpeg and ffprobe (from the machine) for video.
 *
 * sharp's native addon needs libvips beside it. From source both come from node_modules. The compiled
 * binary embeds the addon (Bun extracts it when loaded) and registers the embedded libvips file here
 * (scripts/build.ts writes that registration into the binary's entry): it is copied once to a cache
 * folder and loaded before the addon, so the addon's dependency on it is met by the library already in
 * memory rather than by its search path, which points into a node_modules that the binary does not have.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, basename } from "node:path";
import type SharpType from "sharp";

export type Sharp = typeof SharpType;

let embeddedLibvips: string | undefined;

/** Called by the compiled binary's entry with the path of the embedded libvips library. */
export function embedLibvips(path: string): void {
  embeddedLibvips = path;
}

function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || (homedir() ? join(homedir(), ".cache") : tmpdir());
  return join(base, "crier");
}

/** Copies the embedded libvips out of the binary once (by content size and name) and loads it. */
async function loadEmbeddedLibvips(path: string): Promise<void> {
  const source = Bun.file(path);
  const name = basename(path).replace(/-[a-z0-9]{8}(\.so)/, "$1");
  const tag = createHash("sha1").update(`${name}:${source.size}`).digest("hex").slice(0, 12);
  const dir = join(cacheDir(), `libvips-${tag}`);
  const target = join(dir, name.startsWith("libvips") ? name : "libvips-cpp.so");
  if (!existsSync(target) || statSync(target).size !== source.size) {
    mkdirSync(dir, { recursive: true });
    const partial = `${target}.${process.pid}.partial`;
    await Bun.write(partial, source);
    renameSync(partial, target);
  }
  const { dlopen } = await import("bun:ffi");
  dlopen(target, { vips_version: { args: ["int"], returns: "int" } });
}

let sharpPromise: Promise<Sharp> | undefined;

/**
 * sharp, loaded on first use. require (not import) so that the bundler follows sharp's CommonJS entry,
 * whose platform addon is a static require it can embed.
 */
export function sharp(): Promise<Sharp> {
  sharpPromise ??= (async () => {
    if (embeddedLibvips) await loadEmbeddedLibvips(embeddedLibvips);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require("sharp") as Sharp;
    // Memory stays bounded: no operation cache, and libvips' own threads limited per conversion.
    loaded.cache(false);
    loaded.concurrency(1);
    return loaded;
  })();
  return sharpPromise;
}

export interface VideoTools {
  ffmpeg: string | null;
  ffprobe: string | null;
}

let found: { key: string; tools: VideoTools } | undefined;

/**
 * ffmpeg and ffprobe: FFMPEG_PATH and FFPROBE_PATH when set (an unusable path counts as absent), else
 * ffprobe beside FFMPEG_PATH, else both on PATH. null for a tool that is not there.
 */
export function videoTools(opts: { ffmpegPath?: string; ffprobePath?: string } = {}): VideoTools {
  const key = `${opts.ffmpegPath ?? ""}|${opts.ffprobePath ?? ""}|${process.env.PATH ?? ""}`;
  if (found?.key === key) return found.tools;
  const usable = (p: string | undefined) => (p && existsSync(p) && statSync(p).isFile() ? p : null);
  const onPath = (name: string) => Bun.which(name, { PATH: process.env.PATH ?? "" });
  const ffmpeg = opts.ffmpegPath !== undefined ? usable(opts.ffmpegPath) : onPath("ffmpeg");
  const ffprobe =
    opts.ffprobePath !== undefined
      ? usable(opts.ffprobePath)
      : opts.ffmpegPath !== undefined
        ? (usable(join(dirname(opts.ffmpegPath), "ffprobe")) ?? onPath("ffprobe"))
        : onPath("ffprobe");
  const tools = { ffmpeg, ffprobe };
  found = { key, tools };
  return tools;
}
