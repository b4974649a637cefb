/**
 * A cover inserted as a video's first frame (the spec's thumbnail_url on TikTok, whose API takes no cover
 * image): the cover image, scaled to fit the video's picture and padded with black, shown for one frame,
 * then the video. A pure function over local files; the caller stores the result as a rendition.
 */
import { probeVideo } from "./probe.ts";
import type { VideoTools } from "./tools.ts";

/**
 * Writes to `output` an MP4 (H.264 + AAC, moov first for faststart) whose first frame is the image at
 * `cover` fitted into the video's frame size, followed by the video at `video` (its frame rate and
 * picture size kept; a video without sound stays without). Needs ffmpeg and ffprobe; throws with
 * ffmpeg's first error line when it fails.
 */
export async function insertCoverFrame(tools: VideoTools, video: string, cover: string, output: string): Promise<void> {
  if (!tools.ffmpeg || !tools.ffprobe) throw new Error("inserting a cover frame needs ffmpeg and ffprobe");
  const facts = await probeVideo(tools, video);
  if (!facts?.width || !facts.height) throw new Error("the video's picture size could not be read");
  // H.264 in 4:2:0 needs even sides.
  const w = facts.width - (facts.width % 2);
  const h = facts.height - (facts.height % 2);
  const fps = facts.frame_rate && facts.frame_rate <= 120 ? facts.frame_rate : 30;
  const audio = facts.audio_codec !== null;
  const picture = `setsar=1,fps=${fps},format=yuv420p`;
  const sound = "aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo";
  const graph = [
    `[1:v]scale=${w}:${h}:force_original_aspect_ratio=decrease,pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2:color=black,${picture},trim=end_frame=1[c]`,
    `[0:v]scale=${w}:${h},${picture}[v]`,
    ...(audio
      ? [`[0:a]${sound}[a0]`, `[2:a]${sound}[a1]`, "[c][a1][v][a0]concat=n=2:v=1:a=1[ov][oa]"]
      : ["[c][v]concat=n=2:v=1:a=0[ov]"]),
  ].join(";");
  const frame = (1 / fps).toFixed(6);
  const args = [
    tools.ffmpeg,
    ...["-v", "error", "-y", "-i", video, "-loop", "1", "-t", frame, "-i", cover],
    ...(audio ? ["-f", "lavfi", "-t", frame, "-i", "anullsrc=r=48000:cl=stereo"] : []),
    ...["-filter_complex", graph, "-map", "[ov]", ...(audio ? ["-map", "[oa]"] : [])],
    // Nothing of the source's metadata (a phone's recording location) goes with the new video.
    ...["-map_metadata", "-1"],
    ...["-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p"],
    ...(audio ? ["-c:a", "aac", "-b:a", "128k"] : []),
    ...["-movflags", "+faststart", "-f", "mp4", output],
  ];
  const proc = Bun.spawn(args, { stdout: "ignore", stderr: "pipe", stdin: "ignore" });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`ffmpeg could not insert the cover (${err.trim().split("\n")[0] || `exit ${code}`})`);
}
