/**
 * A post's media item as the dashboard previews it. A video shows its cover (thumbnail_url) before it
 * plays, else the poster frame Crier made of its own upload (GET /v1/media/{id} answers poster_url).
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.ts";
import type { Media } from "./types.ts";

/** The media id of one of Crier's own files, from its public URL (…/med_<22 chars>.<ext>), else null. */
export function ownMediaId(url: string): string | null {
  const last = url.split(/[?#]/)[0].split("/").pop() ?? "";
  return /^(med_[A-Za-z0-9_-]{22})\.[a-z0-9]{2,5}$/.exec(last)?.[1] ?? null;
}

/** The picture shown before a video plays: its thumbnail_url, else our poster frame, else none. */
export function usePoster(item: { url: string; type?: string; thumbnail_url?: string }): string | undefined {
  const [poster, setPoster] = useState<string | undefined>(item.thumbnail_url);
  useEffect(() => {
    setPoster(item.thumbnail_url);
    const id = item.type === "video" && !item.thumbnail_url ? ownMediaId(item.url) : null;
    if (!id) return;
    let live = true;
    // A link to media of another profile or a deleted file simply has no poster.
    api<{ data: Media }>("GET", `/v1/media/${id}`).then(
      (r) => live && setPoster(r.data.poster_url ?? undefined),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [item.url, item.type, item.thumbnail_url]);
  return poster;
}

export function MediaPreview({ item }: { item: { url: string; type?: string; thumbnail_url?: string } }) {
  const poster = usePoster(item);
  return item.type === "video" ? <video src={item.url} poster={poster} controls /> : <img src={item.url} alt="" />;
}
