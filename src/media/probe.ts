/**
 * Reads what a media file is, once, when its upload completes: images through sharp (the header and the
 * metadata blocks, never the pixels), video through ffprobe. A file neither can read is unreadable.
 */
import type { ImageFacts, MediaFacts, VideoFacts } from "../domain/media-facts.ts";
import { sharp, videoTools, type VideoTools } from "./tools.ts";

/** The file could not be read as the media it claims to be: refused at upload as unreadable_media. */
export class UnreadableMedia extends Error {}

/** True when an EXIF block (as sharp returns it, "Exif\0\0" + TIFF) has a GPS IFD with at least one entry. */
export function exifHasGps(exif: Buffer | undefined): boolean {
  if (!exif || exif.length < 14) return false;
  const tiff = exif.subarray(exif.subarray(0, 6).toString("latin1") === "Exif\0\0" ? 6 : 0);
  if (tiff.length < 8) return false;
  const order = tiff.subarray(0, 2).toString("latin1");
  if (order !== "II" && order !== "MM") return false;
  const le = order === "II";
  const u16 = (at: number) => (le ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (le ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  try {
    const ifd0 = u32(4);
    const entries = u16(ifd0);
    for (let i = 0; i < entries; i++) {
      const at = ifd0 + 2 + i * 12;
      if (u16(at) !== 0x8825) continue; // GPSInfo: the offset of the GPS IFD
      const gps = u32(at + 8);
      return gps > 0 && gps + 2 <= tiff.length && u16(gps) > 0;
    }
  } catch {
    // A block cut short: whatever it claimed, there is no readable position in it.
  }
  return false;
}

const XMP_LOCATION = /GPSLatitude|GPSLongitude|LocationCreated|LocationShown|photoshop:City|Iptc4xmpCore:Location/;

export async function probeImage(input: string | Uint8Array): Promise<ImageFacts> {
  const lib = await sharp();
  let meta: Awaited<ReturnType<ReturnType<Sharp>["metadata"]>>;
  try {
    meta = await lib(input, { failOn: "error", animated: true }).metadata();
  } catch (e) {
    throw new UnreadableMedia(`the image could not be read (${(e as Error).message})`);
  }
  if (!meta.format || !meta.width || !meta.height) throw new UnreadableMedia("the image has no size in its header");
  const orientation = meta.orientation ?? 1;
  const pages = meta.pages ?? 1;
  // With animated: true, height is that of all frames stacked; pageHeight is one frame's.
  const frameHeight = pages > 1 && meta.pageHeight ? meta.pageHeight : meta.height;
  const turned = orientation >= 5;
  const xmp = meta.xmp ? meta.xmp.toString("utf8") : "";
  return {
    kind: "image",
    format: meta.format === "heif" && meta.compression === "av1" ? "avif" : meta.format,
    width: turned ? frameHeight : meta.width,
    height: turned ? meta.width : frameHeight,
    orientation,
    animated: pages > 1,
    has_location: exifHasGps(meta.exif) || XMP_LOCATION.test(xmp),
  };
}
type Sharp = Awaited<ReturnType<typeof sharp>>;

interface FfprobeOutput {
  format?: { format_name?: string; duration?: string; tags?: Record<string, string> };
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    avg_frame_rate?: string;
    r_frame_rate?: string;
    duration?: string;
    tags?: Record<string, string>;
    side_data_list?: { side_data_type?: string; rotation?: number }[];
    disposition?: { attached_pic?: number };
  }[];
}

const rate = (r: string | undefined) => {
  if (!r) return null;
  const [n, d] = r.split("/").map(Number);
  const v = d ? n / d : n;
  return Number.isFinite(v) && v > 0 ? Math.round(v * 1000) / 1000 : null;
};

/** Runs ffprobe on a local path or URL; null when it is not installed. */
export async function runFfprobe(tools: VideoTools, location: string, timeoutMs = 30_000): Promise<FfprobeOutput> {
  if (!tools.ffprobe) throw new Error("ffprobe is not installed");
  const proc = Bun.spawn(
    [tools.ffprobe, "-v", "error", "-print_format", "json", "-show_format", "-show_streams", location],
    { stdout: "pipe", stderr: "pipe", stdin: "ignore" },
  );
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  try {
    const [text, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (code !== 0)
      throw new UnreadableMedia(
        `the video could not be read (${err.trim().split("\n")[0] || `ffprobe exited ${code}`})`,
      );
    return JSON.parse(text) as FfprobeOutput;
  } finally {
    clearTimeout(timer);
  }
}

export function videoFactsOf(out: FfprobeOutput): VideoFacts {
  const streams = out.streams ?? [];
  const video = streams.find((s) => s.codec_type === "video" && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === "audio");
  if (!video) throw new UnreadableMedia("the file has no video stream");
  const duration = Number(out.format?.duration ?? video.duration);
  const matrix = video.side_data_list?.find((d) => typeof d.rotation === "number")?.rotation;
  const rotation = (((Math.round(Number(matrix ?? video.tags?.rotate ?? 0) / 90) * 90) % 360) + 360) % 360;
  const turned = rotation === 90 || rotation === 270;
  const tags = { ...out.format?.tags };
  const lowered = Object.keys(tags).map((k) => k.toLowerCase());
  return {
    kind: "video",
    container: out.format?.format_name ?? "unknown",
    video_codec: video.codec_name ?? null,
    audio_codec: audio?.codec_name ?? null,
    duration: Number.isFinite(duration) && duration > 0 ? Math.round(duration * 1000) / 1000 : null,
    width: (turned ? video.height : video.width) ?? null,
    height: (turned ? video.width : video.height) ?? null,
    rotation,
    frame_rate: rate(video.avg_frame_rate) ?? rate(video.r_frame_rate),
    has_location: lowered.some(
      (k) => k === "location" || k.startsWith("location-") || k.includes("quicktime.location"),
    ),
  };
}

/**
 * The facts of a video at a local path or URL, or null when ffprobe is not installed (the facts stay
 * unknown: nothing pretends). Throws UnreadableMedia when ffprobe cannot read it.
 */
export async function probeVideo(tools: VideoTools, location: string): Promise<VideoFacts | null> {
  if (!tools.ffprobe) return null;
  return videoFactsOf(await runFfprobe(tools, location));
}

export async function probe(
  kind: "image" | "video",
  input: { location: string; bytes?: () => Promise<Uint8Array> },
  tools: VideoTools = videoTools(),
): Promise<MediaFacts | null> {
  if (kind === "video") return probeVideo(tools, input.location);
  return probeImage(input.bytes ? await input.bytes() : input.location);
}
