/** A cover inserted as a video's first frame: real files made by sharp and ffmpeg, the result read back. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { insertCoverFrame } from "../../src/media/cover-frame.ts";
import { probeVideo } from "../../src/media/probe.ts";
import { sharp, videoTools } from "../../src/media/tools.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";

const tools = videoTools();
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "crier-cover-frame-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, bytes: Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};

/** Frame `n` of a video as raw RGB statistics (sharp), extracted by ffmpeg. */
async function frameStats(video: string, n: number) {
  const png = join(dir, `frame-${n}-${Math.random().toString(36).slice(2)}.png`);
  const r = spawnSync(tools.ffmpeg!, ["-v", "error", "-i", video, "-vf", `select=eq(n\\,${n})`, "-frames:v", "1", png]);
  expect(r.status).toBe(0);
  const lib = await sharp();
  const img = lib(readFileSync(png));
  return { stats: await img.stats(), meta: await img.metadata(), png };
}

const COVER = { r: 30, g: 120, b: 200 };

test("the first frame is the cover, the rest is the video, as H.264 and AAC with moov first", async () => {
  const video = file("in.mp4", makeVideo({ width: 320, height: 240, seconds: 2, fps: 25 }));
  const cover = file("cover.png", await makeImage({ width: 800, height: 600, format: "png" }));
  const out = join(dir, "out.mp4");
  await insertCoverFrame(tools, video, cover, out);

  const facts = await probeVideo(tools, out);
  expect(facts).toMatchObject({ video_codec: "h264", audio_codec: "aac", width: 320, height: 240, frame_rate: 25 });
  expect(facts!.duration!).toBeGreaterThanOrEqual(2);
  expect(facts!.duration!).toBeLessThan(2.2);

  const first = await frameStats(out, 0);
  const [r, g, b] = first.stats.channels.map((c) => c.mean);
  expect(Math.abs(r - COVER.r)).toBeLessThan(12);
  expect(Math.abs(g - COVER.g)).toBeLessThan(12);
  expect(Math.abs(b - COVER.b)).toBeLessThan(12);
  // The next frame is the video's own first frame (ffmpeg's test pattern), nothing like the cover.
  const second = await frameStats(out, 1);
  const original = await frameStats(video, 0);
  second.stats.channels.forEach((c, i) => expect(Math.abs(c.mean - original.stats.channels[i].mean)).toBeLessThan(8));
  expect(
    Math.abs(second.stats.channels[2].mean - COVER.b) + Math.abs(second.stats.channels[0].mean - COVER.r),
  ).toBeGreaterThan(30);

  const bytes = readFileSync(out);
  expect(bytes.indexOf("moov")).toBeLessThan(bytes.indexOf("mdat"));
}, 60_000);

test("a cover of another shape is fitted inside the video's frame with black bars; a silent video stays silent", async () => {
  const video = file("tall.mp4", makeVideo({ width: 360, height: 640, seconds: 1, audio: false }));
  const cover = file("wide.jpg", await makeImage({ width: 1280, height: 720, format: "jpeg" }));
  const out = join(dir, "tall-out.mp4");
  await insertCoverFrame(tools, video, cover, out);
  const facts = await probeVideo(tools, out);
  expect(facts).toMatchObject({ width: 360, height: 640, audio_codec: null, video_codec: "h264" });
  const first = await frameStats(out, 0);
  const lib = await sharp();
  const { data, info } = await lib(first.png).raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
  // The top is a bar, the middle the cover.
  at(180, 10).forEach((v) => expect(v).toBeLessThan(20));
  const [r, g, b] = at(180, 320);
  expect(Math.abs(r - COVER.r) + Math.abs(g - COVER.g) + Math.abs(b - COVER.b)).toBeLessThan(36);
}, 60_000);
