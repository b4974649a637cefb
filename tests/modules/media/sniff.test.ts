import { describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probeVideo } from "../../../src/modules/media/probe.ts";
import { imageDimensions, matchesType } from "../../../src/modules/media/sniff.ts";
import { decodeMediaId, encodeMediaId } from "../../../src/domain/media-ids.ts";
import { makeGif, makeJpeg, makeMp4, makePng, makeWebm } from "../../support/media-fixtures.ts";

const webp = (chunk: string, fill: (b: Buffer) => void) => {
  const b = Buffer.alloc(40);
  b.write("RIFF", 0, "ascii");
  b.writeUInt32LE(32, 4);
  b.write("WEBP", 8, "ascii");
  b.write(chunk, 12, "ascii");
  fill(b);
  return new Uint8Array(b);
};

describe("sniffing", () => {
  test("each type is recognised and not taken for another", () => {
    const files = {
      "image/png": makePng(1, 1),
      "image/jpeg": makeJpeg(1, 1),
      "image/gif": makeGif(1, 1),
      "image/webp": webp("VP8X", () => {}),
      "video/webm": makeWebm(),
    } as const;
    for (const [type, bytes] of Object.entries(files)) {
      for (const other of Object.keys(files))
        expect(matchesType(bytes, other as keyof typeof files)).toBe(other === type);
      expect(matchesType(bytes, "video/mp4")).toBe(false);
    }
  });

  test("MP4 and QuickTime accept each other's ISO media files; Matroska is not WebM", () => {
    expect(matchesType(makeMp4(10), "video/mp4")).toBe(true);
    expect(matchesType(makeMp4(10), "video/quicktime")).toBe(true);
    const mkv = makeWebm();
    Buffer.from(mkv.buffer).write("mkvx", mkv.indexOf(0x77), "ascii");
    expect(matchesType(mkv, "video/webm")).toBe(false);
    expect(matchesType(new Uint8Array(0), "image/png")).toBe(false);
  });

  test("WebP sizes from all three header kinds", () => {
    expect(
      imageDimensions(
        webp("VP8X", (b) => {
          b.writeUIntLE(799, 24, 3);
          b.writeUIntLE(599, 27, 3);
        }),
        "image/webp",
      ),
    ).toEqual({ width: 800, height: 600 });
    expect(
      imageDimensions(
        webp("VP8L", (b) => b.writeUInt32LE(99 | (49 << 14), 21)),
        "image/webp",
      ),
    ).toEqual({ width: 100, height: 50 });
    expect(
      imageDimensions(
        webp("VP8 ", (b) => {
          b.writeUInt16LE(320, 26);
          b.writeUInt16LE(240, 28);
        }),
        "image/webp",
      ),
    ).toEqual({ width: 320, height: 240 });
  });

  test("a JPEG whose size lies past the sniffed bytes is unknown, not an error", () => {
    const jpeg = makeJpeg(100, 100);
    expect(imageDimensions(jpeg.subarray(0, 12), "image/jpeg")).toBeNull();
    expect(imageDimensions(jpeg, "image/jpeg")).toEqual({ width: 100, height: 100 });
  });
});

describe("media ids", () => {
  test("round-trip and refuse non-canonical spellings", () => {
    const uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    const id = encodeMediaId(uuid);
    expect(id).toMatch(/^med_[A-Za-z0-9_-]{22}$/);
    expect(decodeMediaId(id)).toBe(uuid);
    const last = id.at(-1)!;
    const sibling = id.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) + 1);
    expect(decodeMediaId(sibling)).toBeNull();
    expect(decodeMediaId(uuid)).toBeNull();
  });
});

describe("video facts from ffprobe", () => {
  /** Runs probeVideo with a stand-in ffprobe (a shell script) first on PATH, or with none at all. */
  async function withFfprobe(script: string | null) {
    const saved = process.env.PATH;
    const dir = mkdtempSync(join(tmpdir(), "crier-ffprobe-"));
    if (script !== null) {
      writeFileSync(join(dir, "ffprobe"), `#!/bin/sh\n${script}\n`);
      chmodSync(join(dir, "ffprobe"), 0o755);
    }
    process.env.PATH = script === null ? dir : `${dir}:${saved}`;
    try {
      return await probeVideo("/nonexistent.mp4");
    } finally {
      process.env.PATH = saved;
    }
  }

  test("reads duration and size from ffprobe's JSON", async () => {
    const json = JSON.stringify({
      format: { duration: "12.480000" },
      streams: [{ codec_type: "audio" }, { codec_type: "video", width: 1920, height: 1080 }],
    });
    expect(await withFfprobe(`echo '${json}'`)).toEqual({ durationSeconds: 12.48, width: 1920, height: 1080 });
  });

  test("no ffprobe, or a failing one, leaves everything unknown", async () => {
    const unknown = { durationSeconds: null, width: null, height: null };
    expect(await withFfprobe(null)).toEqual(unknown);
    expect(await withFfprobe("echo broken; exit 1")).toEqual(unknown);
    expect(await withFfprobe("echo 'not json'")).toEqual(unknown);
  });
});
