import { describe, expect, test } from "bun:test";
import { matchesType } from "../../../src/modules/media/sniff.ts";
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
