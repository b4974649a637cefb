/**
 * An upload as the media library shows it: a thumbnail (the image itself, a video's poster frame) and
 * what Crier read from the file, in words (size, dimensions, duration, codec). Shared by the Media page
 * and compose's "Choose from library" picker.
 */
import { api } from "./api.ts";
import type { Media } from "./types.ts";

export interface MediaPage {
  data: Media[];
  meta: { has_more: boolean; next_after: string | null; next_after_id: string | null };
}

/** One page of GET /v1/media after the given page's cursor (the first page without one). */
export function loadMedia(after?: MediaPage["meta"], type?: "image" | "video", limit = 24): Promise<MediaPage> {
  const q = new URLSearchParams({ limit: String(limit) });
  if (type) q.set("type", type);
  if (after?.next_after && after.next_after_id) {
    q.set("after", after.next_after);
    q.set("after_id", after.next_after_id);
  }
  return api<MediaPage>("GET", `/v1/media?${q}`);
}

export const isVideo = (m: Media) => m.content_type.startsWith("video/");

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

function seconds(s: number): string {
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** The facts worth reading, each "label: value", in a fixed order. */
export function factList(m: Media): [string, string][] {
  const out: [string, string][] = [["Size", bytes(m.size)]];
  if (m.width && m.height) out.push(["Dimensions", `${m.width} × ${m.height} px`]);
  const f = m.facts;
  if (f?.kind === "video") {
    if (f.duration !== null) out.push(["Duration", seconds(f.duration)]);
    out.push(["Codec", [f.video_codec, f.audio_codec].filter(Boolean).join(" + ") || "unknown"]);
    if (f.frame_rate) out.push(["Frame rate", `${Math.round(f.frame_rate * 100) / 100} fps`]);
  } else if (f?.kind === "image") {
    out.push(["Format", f.animated ? `${f.format} (animated)` : f.format]);
  } else if (isVideo(m)) out.push(["Facts", "unknown (the server has no ffprobe)"]);
  if (f?.has_location) out.push(["Location", "in the file; removed before publishing"]);
  return out;
}

/** `decorative`: the thumbnail sits inside a control that already names the file (the picker's buttons). */
export function MediaThumb({ media, decorative = false }: { media: Media; decorative?: boolean }) {
  const name = media.filename ?? media.id;
  if (decorative) {
    const still = isVideo(media) ? media.poster_url : media.public_url;
    return still ? (
      <img class="thumb" src={still} alt="" loading="lazy" />
    ) : (
      <video class="thumb" src={media.public_url} muted preload="metadata" aria-hidden="true" />
    );
  }
  if (!isVideo(media)) return <img class="thumb" src={media.public_url} alt={name} loading="lazy" />;
  return media.poster_url ? (
    <img class="thumb" src={media.poster_url} alt={`${name} (video)`} loading="lazy" />
  ) : (
    <video class="thumb" src={media.public_url} muted preload="metadata" aria-label={`${name} (video)`} />
  );
}

export function MediaFactsList({ media }: { media: Media }) {
  return (
    <dl class="media-facts">
      {factList(media).map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
