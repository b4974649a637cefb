/**
 * Which media tools this copy has, and what does not work without each missing one: shown by /readyz
 * and `crier accounts check`. A missing tool is a feature turned off, never a copy that is not ready.
 */
import type { Config } from "../config.ts";
import { sharp, videoTools } from "./tools.ts";

export interface MediaToolsReport {
  sharp: boolean;
  ffmpeg: boolean;
  ffprobe: boolean;
  /** One sentence per missing tool: what does not work without it, and the setting that points to it. */
  missing: string[];
}

export async function mediaToolsReport(config: Pick<Config, "ffmpegPath" | "ffprobePath">): Promise<MediaToolsReport> {
  const loaded = await sharp().then(
    () => true,
    () => false,
  );
  const tools = videoTools(config);
  const missing: string[] = [];
  if (!loaded)
    missing.push(
      "sharp (libvips) could not be loaded: image facts are unknown and images are not converted for platforms.",
    );
  if (!tools.ffmpeg)
    missing.push(
      "ffmpeg not found (install it, or set FFMPEG_PATH): no video conversion (MOV/WebM → MP4) and no poster frames.",
    );
  if (!tools.ffprobe)
    missing.push(
      "ffprobe not found (install ffmpeg, or set FFPROBE_PATH): video facts (duration, size, codecs, frame rate) stay unknown, " +
        "so videos are checked only with what the client sends.",
    );
  return { sharp: loaded, ffmpeg: !!tools.ffmpeg, ffprobe: !!tools.ffprobe, missing };
}
