// The README's platform table, rendered from the registry so the documentation cannot drift from the
// declarations: scripts/platform-table.ts prints it, and a test checks the README contains it.
import type { PlatformRegistry } from "../src/platform/host/catalog.ts";
import { UNIT_NAMES } from "../src/platform/text.ts";
import { METRIC_NAMES } from "../src/platform/sdk.ts";

const yes = (b: boolean) => (b ? "yes" : "no");
const MB = 1024 * 1024;
const size = (bytes: number) =>
  bytes >= 1024 * MB ? `${+(bytes / (1024 * MB)).toFixed(1)} GB` : `${+(bytes / MB).toFixed(1)} MB`;

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

export function renderPlatformTable(registry: PlatformRegistry): string {
  const rows = [
    "| Platform | Connection mode | Text | Images | Video | Replies / threads | Converted by Crier | Status |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const p of registry.list()) {
    const d = registry.describe(p.platform)!;
    const c = d.capabilities;
    const fc = d.media_requirements.file_constraints;
    const unit = UNIT_NAMES[p.textLimit.unit];
    const caption = p.textLimit.withMediaMax !== undefined ? ` (${p.textLimit.withMediaMax} with media)` : "";
    const bytes = p.textLimit.maxBytes !== undefined ? ` and ${p.textLimit.maxBytes} bytes` : "";
    const text = `${c.text ? "" : "with media only; "}${p.textLimit.max} ${unit}${bytes}${caption}`;
    const images = c.images
      ? `up to ${fc.maxImageFiles}, ${size(d.media_requirements.max_size_bytes.image)} each`
      : "no";
    const video = c.video
      ? `${fc.maxVideoFiles === 1 ? "1" : `up to ${fc.maxVideoFiles}`}, ${size(d.media_requirements.max_size_bytes.video)}`
      : "no";
    const status = d.status === "implemented" ? "implemented" : "declared only";
    rows.push(
      `| ${p.displayName} (\`${p.platform}\`) | \`${c.connection_mode}\`${p.connect ? "" : " (not yet)"} | ${text} | ${images} | ${video} | ${yes(c.replies)} / ${yes(c.threads)} | ${conversions(p.mediaRequirements.convertible_formats)} | ${status} |`,
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
