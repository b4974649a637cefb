// bench/convert: Crier's conversions against the bare tool doing the same work on the same file, same run.
//   (a) a 4000×3000 photo to a 1440-wide JPEG: src/media/convert.ts against sharp alone (same operations);
//   (b) a 60 s 1080p MOV (made here by ffmpeg) to MP4 H.264 + AAC: Crier against the same ffmpeg command.
//   npx bun bench/convert.ts     (BENCH_IMAGE_RUNS=20, BENCH_VIDEO_SECONDS=60)
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { convertFile, ffmpegArgs } from "../src/media/convert.ts";
import { probeImage, probeVideo } from "../src/media/probe.ts";
import { sharp, videoTools } from "../src/media/tools.ts";
import type { OutputSpec } from "../src/platform/host/media-plan.ts";
import { figure, times } from "./figures.ts";

const work = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "crier-bench-convert-"));
const imageRuns = Number(process.env.BENCH_IMAGE_RUNS ?? 20);
const videoSeconds = Number(process.env.BENCH_VIDEO_SECONDS ?? 60);
const tools = videoTools({ ffmpegPath: process.env.FFMPEG_PATH });

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

async function image() {
  const lib = await sharp();
  const source = join(work, "photo.jpg");
  // A photo's worth of detail: random pixels, blurred a little so it compresses like a real one.
  const pixels = Buffer.alloc(4000 * 3000 * 3);
  for (let i = 0; i < pixels.length; i += 65536) crypto.getRandomValues(pixels.subarray(i, i + 65536));
  await lib(pixels, { raw: { width: 4000, height: 3000, channels: 3 } })
    .blur(1.2)
    .jpeg({ quality: 90 })
    .toFile(source);
  const facts = await probeImage(source);
  const spec: OutputSpec = { contentType: "image/jpeg", maxWidth: 1440, maxBytes: 8_000_000, stripMetadata: true };
  const crierOut = join(work, "crier.jpg");
  const bareOut = join(work, "bare.jpg");
  const crier = () => convertFile(source, facts, spec, crierOut, { concurrency: 1, tools });
  const bare = () =>
    lib(source, { failOn: "error" })
      .rotate()
      .resize(1440, 1080, { fit: "inside" })
      .keepIccProfile()
      .flatten({ background: "#ffffff" })
      .jpeg({ quality: 85 })
      .toFile(bareOut);
  await crier();
  await bare(); // warm-up of both
  let c = 0;
  let b = 0;
  for (let i = 0; i < imageRuns; i++) {
    // Alternating, so the machine's load falls on both alike.
    c += await seconds(crier);
    b += await seconds(bare);
  }
  c /= imageRuns;
  b /= imageRuns;
  console.log(
    `image 4000×3000 (${statSync(source).size} bytes) → 1440 wide: Crier ${(c * 1000).toFixed(0)} ms (${statSync(crierOut).size} bytes), sharp alone ${(b * 1000).toFixed(0)} ms (${statSync(bareOut).size} bytes), mean of ${imageRuns}`,
  );
  figure("convert: image to 1440 px JPEG, sharp alone ÷ Crier", times(b / c, 0.9), "≥ 0.9 ×", b / c >= 0.9);
}

async function video() {
  if (!tools.ffmpeg) {
    console.log("video: skipped, ffmpeg is not installed");
    return;
  }
  const source = join(work, "clip.mov");
  // A camera's MOV in a codec platforms do not all take (MPEG-4 part 2), with sound: converted, not remuxed.
  const made = spawnSync(tools.ffmpeg, [
    ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30"],
    ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", String(videoSeconds)],
    ...["-c:v", "mpeg4", "-q:v", "4", "-c:a", "pcm_s16le", "-metadata", "location=+48.8583+002.2945/", source],
  ]);
  if (made.status !== 0) throw new Error(`ffmpeg could not make the MOV: ${made.stderr}`);
  const facts = (await probeVideo(tools, source))!;
  const spec: OutputSpec = { contentType: "video/mp4", stripMetadata: true };
  const crierOut = join(work, "crier.mp4");
  const bareOut = join(work, "bare.mp4");
  const c = await seconds(() => convertFile(source, facts, spec, crierOut, { concurrency: 1, tools }));
  const b = await seconds(async () => {
    const r = spawnSync(tools.ffmpeg!, ffmpegArgs(source, facts, spec, bareOut));
    if (r.status !== 0) throw new Error(String(r.stderr));
  });
  console.log(
    `video ${videoSeconds} s 1080p MOV (${statSync(source).size} bytes) → MP4: Crier ${c.toFixed(2)} s (${statSync(crierOut).size} bytes), the same ffmpeg command ${b.toFixed(2)} s (${statSync(bareOut).size} bytes); ${(videoSeconds / c).toFixed(2)} × real time`,
  );
  figure("convert: 60 s 1080p MOV to MP4, bare ffmpeg ÷ Crier", times(b / c, 0.9), "≥ 0.9 ×", b / c >= 0.9);
}

try {
  await image();
  await video();
} finally {
  rmSync(work, { recursive: true, force: true });
}
