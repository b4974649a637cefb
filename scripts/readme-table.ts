// The README's platform table, rendered from the registry so the documentation cannot drift from the
// declarations: scripts/platform-table.ts prints it, and a test checks the README contains it.
import type { PlatformRegistry } from "../src/platform/host/catalog.ts";
import type { AltTextSupport } from "../src/platform/declaration.ts";
import { UNIT_NAMES } from "../src/platform/text.ts";
import { METRIC_NAMES } from "../src/platform/sdk.ts";

const yes = (b: boolean) => (b ? "yes" : "no");
const MB = 1024 * 1024;
const size = (bytes: number) =>
  bytes >= 1024 * MB ? `${+(bytes / (1024 * MB)).toFixed(1)} GB` : `${+(bytes / MB).toFixed(1)} MB`;

/** 900 → "15 min", 0.5 → "0.5 s": a duration as the platforms' own pages write it. */
const seconds = (s: number) =>
  s >= 3600 && s % 3600 === 0 ? `${s / 3600} h` : s >= 60 && s % 60 === 0 ? `${s / 60} min` : `${s} s`;
/** "3 to 60", "at least 3", "up to 60": a declared range in words, or null when nothing is declared. */
function range<T>(lo: T | null | undefined, hi: T | null | undefined, show: (v: T) => string): string | null {
  if (lo != null && hi != null) return `${show(lo)} to ${show(hi)}`;
  if (lo != null) return `at least ${show(lo)}`;
  if (hi != null) return `up to ${show(hi)}`;
  return null;
}
const facts = (parts: (string | null)[]) =>
  parts
    .filter((x) => x !== null)
    .map((x) => `, ${x}`)
    .join("");

/** Where media[].alt_text goes and its limit: "images, up to 1000 characters; videos, no limit". */
function altTextCell(a: AltTextSupport | null): string {
  if (!a) return "no";
  const rule = (r: NonNullable<AltTextSupport["image"]>) =>
    r.max_length === null ? "no limit" : `up to ${r.max_length} ${UNIT_NAMES[r.unit]}`;
  const { image, video } = a;
  if (image && video && JSON.stringify(image) === JSON.stringify(video)) return `images and videos, ${rule(image)}`;
  return [image && `images, ${rule(image)}`, video && `videos, ${rule(video)}`].filter(Boolean).join("; ");
}

const SHORT: Record<string, string> = {
  "image/jpeg": "JPEG",
  "image/png": "PNG",
  "image/webp": "WebP",
  "video/mp4": "MP4",
  "video/quicktime": "MOV",
  "video/webm": "WebM",
};

/** The declared conversions (the plugin's, not this machine's: video ones need ffmpeg), grouped by output. */
function conversions(declared: Record<string, string>): string {
  const byOutput = new Map<string, string[]>();
  for (const [from, to] of Object.entries(declared))
    byOutput.set(to, [...(byOutput.get(to) ?? []), SHORT[from] ?? from]);
  if (!byOutput.size) return "—";
  return [...byOutput]
    .map(([to, from]) => `${from.join(", ")} → ${SHORT[to] ?? to}${to.startsWith("video/") ? " (ffmpeg)" : ""}`)
    .join("; ");
}

/** Where a video's cover (media[].thumbnail_url) is applied, from the declaration's `thumbnail`. */
function coverCell(thumbnail: Record<string, unknown> | null): string {
  if (!thumbnail) return "no";
  return typeof thumbnail.applies_to === "string" ? thumbnail.applies_to : "yes";
}

export function renderPlatformTable(registry: PlatformRegistry): string {
  const rows = [
    "| Platform | Connection mode | Text | Images (aspect ratio as width:height) | Video (duration, aspect ratio, frame rate) | Alt text | Cover (media[].thumbnail_url) | Converted by Crier | Replies / threads | Status |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const p of registry.list()) {
    const d = registry.describe(p.platform)!;
    const c = d.capabilities;
    const fc = d.media_requirements.file_constraints;
    const unit = UNIT_NAMES[p.textLimit.unit];
    const caption = p.textLimit.withMediaMax !== undefined ? ` (${p.textLimit.withMediaMax} with media)` : "";
    const bytes = p.textLimit.maxBytes !== undefined ? ` and ${p.textLimit.maxBytes} bytes` : "";
    const text = `${c.text ? "" : "with media only; "}${p.textLimit.max} ${unit}${bytes}${caption}`;
    const mr = d.media_requirements;
    const ratio = (r?: { min?: string; max?: string }) => range(r?.min, r?.max, (v) => v);
    // The rules checked at creation beside the counts and sizes: aspect ratio (width:height), duration, frame rate.
    const images = c.images
      ? `up to ${fc.maxImageFiles}, ${size(mr.max_size_bytes.image)} each${facts([ratio(mr.aspect_ratio?.image)])}`
      : "no";
    const video = c.video
      ? `${fc.maxVideoFiles === 1 ? "1" : `up to ${fc.maxVideoFiles}`}, ${size(mr.max_size_bytes.video)}` +
        facts([
          range(mr.min_video_duration_seconds, mr.max_video_duration_seconds, seconds),
          ratio(mr.aspect_ratio?.video),
          range(fc.minFrameRate, fc.maxFrameRate, String)?.concat(" fps") ?? null,
        ])
      : "no";
    const status = d.status === "implemented" ? "implemented" : "declared only";
    rows.push(
      `| ${p.displayName} (\`${p.platform}\`) | \`${c.connection_mode}\`${p.connect ? "" : " (not yet)"} | ${text} | ${images} | ${video} | ${altTextCell(d.media_requirements.alt_text)} | ${coverCell(mr.thumbnail)} | ${conversions(p.mediaRequirements.convertible_formats)} | ${yes(c.replies)} / ${yes(c.threads)} | ${status} |`,
    );
  }
  const missing = registry
    .list()
    .filter((p) => p.missing?.length)
    .map((p) => `- ${p.displayName}: ${p.missing!.join("; ")}.`);
  if (missing.length === 0) return rows.join("\n");
  return [...rows, "", "Still missing on the declared-only platforms:", "", ...missing].join("\n");
}

/**
 * The README's analytics table: which numbers each platform gives (metricNames), whether followers are
 * read (accountStats) and whether posts made on the platform itself are found (fetchRecent on a source).
 */
export function renderAnalyticsTable(registry: PlatformRegistry): string {
  const rows = [
    "| Platform | Views | Likes | Comments | Shares | Saves | Followers | Posts made on the platform |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const p of registry.list()) {
    const names = new Set(p.metrics ? (p.metricNames ?? []) : []);
    const cells = METRIC_NAMES.map((n) => yes(names.has(n)));
    const native = yes(Boolean(p.fetchRecent && p.capabilities.source));
    rows.push(
      `| ${p.displayName} (\`${p.platform}\`) | ${cells.join(" | ")} | ${yes(Boolean(p.accountStats))} | ${native} |`,
    );
  }
  return rows.join("\n");
}
