/**
 * Real media files made by the tests themselves: images by sharp, video by ffmpeg (installed by .ci/run).
 * Each video is made once per process and cached in a temporary folder, keyed by its parameters.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharp } from "../../src/media/tools.ts";

export interface ImageSpec {
  width: number;
  height: number;
  format?: "jpeg" | "png" | "webp" | "gif";
  /** Noisy pixels compress badly: the file is large for its size in pixels (for byte-limit tests). */
  noise?: boolean;
  /** Writes an EXIF GPS position (and an XMP location) into the file. */
  gps?: boolean;
  /** EXIF orientation 1–8 (6: the camera was turned; the stored pixels are rotated). */
  orientation?: number;
  quality?: number;
}

/** An image of the given size and format; with `noise`, random pixels (a large file). */
export async function makeImage(spec: ImageSpec): Promise<Uint8Array<ArrayBuffer>> {
  const lib = await sharp();
  const { width, height } = spec;
  let img = lib({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } });
  if (spec.noise) {
    // A real photo's worth of detail: random pixels, which compress badly.
    const pixels = Buffer.alloc(width * height * 3);
    for (let i = 0; i < pixels.length; i += 65536) crypto.getRandomValues(pixels.subarray(i, i + 65536));
    img = lib(pixels, { raw: { width, height, channels: 3 } });
  }
  const format = spec.format ?? "jpeg";
  if (format === "jpeg") img = img.jpeg({ quality: spec.quality ?? 90 });
  else if (format === "png") img = img.png();
  else if (format === "webp") img = img.webp({ quality: spec.quality ?? 90 });
  else img = img.gif();
  if (spec.gps || spec.orientation) {
    img = img.withExif({
      IFD0: { Copyright: "crier tests" },
      ...(spec.gps && {
        IFD3: {
          GPSLatitudeRef: "N",
          GPSLatitude: "48/1 51/1 29/1",
          GPSLongitudeRef: "E",
          GPSLongitude: "2/1 17/1 40/1",
        },
      }),
    });
    if (spec.orientation) img = img.withMetadata({ orientation: spec.orientation });
    if (spec.gps) img = img.withXmp(XMP_WITH_LOCATION);
  }
  return Uint8Array.from(await img.toBuffer());
}

const XMP_WITH_LOCATION = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="48,51.48N" exif:GPSLongitude="2,17.67E"/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;

export interface VideoSpec {
  width?: number;
  height?: number;
  seconds?: number;
  fps?: number;
  container?: "mp4" | "mov" | "webm";
  /** Codec of the picture: h264 (default for mp4/mov), vp9 (default for webm), hevc. */
  codec?: "h264" | "vp9" | "hevc";
  audio?: boolean;
  /** A QuickTime recording location, as phones write it. */
  location?: boolean;
}

const videoDir = join(tmpdir(), `crier-test-videos-${process.pid}`);

export function ffmpegInstalled(): boolean {
  return spawnSync("ffmpeg", ["-version"], { stdio: "ignore" }).status === 0;
}

/** A real video made by ffmpeg (a test pattern and a tone), cached for the process. */
export function makeVideo(spec: VideoSpec = {}): Uint8Array<ArrayBuffer> {
  const s = { width: 320, height: 240, seconds: 1, fps: 25, container: "mp4", audio: true, ...spec } as Required<
    Omit<VideoSpec, "codec" | "location">
  > &
    VideoSpec;
  const codec = s.codec ?? (s.container === "webm" ? "vp9" : "h264");
  const name = `${s.width}x${s.height}-${s.seconds}s-${s.fps}-${codec}-${s.audio ? "a" : "n"}${s.location ? "-loc" : ""}.${s.container}`;
  const file = join(videoDir, name);
  if (!existsSync(file)) {
    mkdirSync(videoDir, { recursive: true });
    const args = ["-v", "error", "-y", "-f", "lavfi", "-i", `testsrc=size=${s.width}x${s.height}:rate=${s.fps}`];
    if (s.audio) args.push("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000");
    args.push("-t", String(s.seconds), "-pix_fmt", "yuv420p");
    if (codec === "h264") args.push("-c:v", "libx264", "-preset", "ultrafast");
    else if (codec === "hevc") args.push("-c:v", "libx265", "-preset", "ultrafast", "-tag:v", "hvc1");
    else args.push("-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8");
    if (s.audio) args.push("-c:a", s.container === "webm" ? "libopus" : "aac");
    if (s.location) args.push("-metadata", "location=+48.8583+002.2945/");
    args.push(file);
    const r = spawnSync("ffmpeg", args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ffmpeg could not make ${name}: ${r.stderr || r.error}`);
  }
  return Uint8Array.from(readFileSync(file));
}
