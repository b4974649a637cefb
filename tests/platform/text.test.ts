import { expect, test } from "bun:test";
import { countText, utf16Prefix, weightedLength } from "../../src/platform/text.ts";

test("weighted length: URLs 23, CJK and emoji 2, Latin 1", () => {
  expect(weightedLength("hello")).toBe(5);
  expect(weightedLength("see https://example.com/a/very/long/path/that/goes/on")).toBe(4 + 23);
  expect(weightedLength("日本")).toBe(4);
  expect(weightedLength("👍🏽")).toBe(2);
  expect(weightedLength("é")).toBe(1);
});

test("each unit counts the same text its own way", () => {
  const text = "日👍🏽é";
  expect(countText(text, "characters")).toBe(4);
  expect(countText(text, "utf16")).toBe(6);
  expect(countText(text, "graphemes")).toBe(3);
  expect(countText(text, "bytes")).toBe(3 + 8 + 2);
  expect(countText(text, "weighted")).toBe(2 + 2 + 1);
});

test("a UTF-16 prefix never cuts an emoji in half", () => {
  expect(utf16Prefix("ab\u{1F600}c", 3)).toBe("ab");
  expect(utf16Prefix("ab\u{1F600}c", 4)).toBe("ab\u{1F600}");
  expect(utf16Prefix("short", 10)).toBe("short");
  expect(countText(utf16Prefix("\u{1F600}".repeat(10), 9), "utf16")).toBe(8);
});

test("Threads' unit: characters, each emoji as its UTF-8 bytes", () => {
  expect(countText("hello", "emoji_bytes")).toBe(5);
  expect(countText("日é", "emoji_bytes")).toBe(2);
  // 👍 is 4 bytes; with a skin tone 8; a family joined by ZWJ is every byte of the sequence.
  expect(countText("a👍", "emoji_bytes")).toBe(1 + 4);
  expect(countText("👍🏽", "emoji_bytes")).toBe(8);
  expect(countText("👨‍👩‍👧", "emoji_bytes")).toBe(18);
  expect(countText("🇫🇷", "emoji_bytes")).toBe(8);
  expect(countText("x".repeat(497) + "👍", "emoji_bytes")).toBe(501);
});

test("mastodon: graphemes, every link as 23, a remote mention without its domain", () => {
  expect(countText("hello", "mastodon")).toBe(5);
  expect(countText(`see https://example.com/${"a".repeat(100)} now`, "mastodon")).toBe(4 + 23 + 4);
  expect(countText("hi @alice@example.social!", "mastodon")).toBe("hi @alice!".length);
  expect(countText("👨‍👩‍👧 ok", "mastodon")).toBe(4);
  expect(countText("mail me at bob@example.com", "mastodon")).toBe("mail me at bob@example.com".length);
});
