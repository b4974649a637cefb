/**
 * Video facts from ffprobe when it is installed. ffprobe is optional: without it, or when it fails or
 * takes too long, everything is unknown (null), never an error.
 */
export interface VideoFacts {
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
}

const UNKNOWN: VideoFacts = { durationSeconds: null, width: null, height: null };

export async function probeVideo(location: string, timeoutMs = 15_000): Promise<VideoFacts> {
  const bin = Bun.which("ffprobe", { PATH: process.env.PATH ?? "" });
  if (!bin) return UNKNOWN;
  try {
    const proc = Bun.spawn([bin, "-v", "error", "-print_format", "json", "-show_format", "-show_streams", location], {
      stdout: "pipe",
      stderr: "ignore",
      stdin: "ignore",
    });
    const timer = setTimeout(() => proc.kill(), timeoutMs);
    const text = await new Response(proc.stdout).text();
    clearTimeout(timer);
    if ((await proc.exited) !== 0) return UNKNOWN;
    const out = JSON.parse(text) as {
      format?: { duration?: string };
      streams?: { codec_type?: string; width?: number; height?: number }[];
    };
    const duration = Number(out.format?.duration);
    const video = out.streams?.find((s) => s.codec_type === "video");
    return {
      durationSeconds: Number.isFinite(duration) && duration > 0 ? duration : null,
      width: video?.width ?? null,
      height: video?.height ?? null,
    };
  } catch {
    return UNKNOWN;
  }
}
