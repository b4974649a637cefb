/** The media library: the profile's uploads, newest first, each with its thumbnail and facts. */
import { useEffect, useRef, useState } from "preact/hooks";
import { Link } from "../router.tsx";
import { loadMedia, MediaFactsList, MediaThumb, type MediaPage } from "../media-facts.tsx";
import type { Media } from "../types.ts";
import { ErrorNote, PageTitle, when } from "../ui.tsx";

/** The uploads and a way to load more, shared by this page and the compose picker. */
export function useMediaLibrary(active = true, type?: "image" | "video") {
  const [items, setItems] = useState<Media[]>([]);
  const [meta, setMeta] = useState<MediaPage["meta"] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  // Only the latest request's answer counts: a slower one for the previous filter is dropped.
  const latest = useRef(0);
  const more = async (after?: MediaPage["meta"]) => {
    const mine = ++latest.current;
    setLoading(true);
    setError(null);
    try {
      const page = await loadMedia(after, type);
      if (mine !== latest.current) return;
      setItems((list) => (after ? [...list, ...page.data] : page.data));
      setMeta(page.meta);
    } catch (e) {
      if (mine === latest.current) setError(e);
    } finally {
      if (mine === latest.current) setLoading(false);
    }
  };
  useEffect(() => {
    if (active) void more();
  }, [active, type]);
  return { items, meta, error, loading, loadMore: () => meta && void more(meta) };
}

export function MediaPage() {
  const [type, setType] = useState<"" | "image" | "video">("");
  const lib = useMediaLibrary(true, type || undefined);
  return (
    <>
      <PageTitle>Media</PageTitle>
      <p class="muted">
        Files uploaded to this profile, newest first. Add one to a post from <Link href="/compose">Compose</Link> with
        "Choose from library".
      </p>
      <label for="media-type">Show</label>
      <select
        id="media-type"
        class="media-type"
        value={type}
        onChange={(e) => setType((e.target as HTMLSelectElement).value as typeof type)}
      >
        <option value="">All uploads</option>
        <option value="image">Images</option>
        <option value="video">Videos</option>
      </select>
      <ErrorNote error={lib.error} />
      {lib.loading && !lib.items.length ? <p role="status">Loading…</p> : null}
      {!lib.loading && !lib.error && !lib.items.length ? (
        <p class="muted">No uploads yet: files you add in Compose appear here.</p>
      ) : null}
      <ul class="media-library" aria-label="Uploads">
        {lib.items.map((m) => (
          <li key={m.id} class="card media-card" data-media={m.id}>
            <MediaThumb media={m} />
            <div class="grow">
              <strong class="filename">{m.filename ?? m.id}</strong>
              <div class="muted small">
                {m.content_type} · uploaded {when(m.uploaded_at)}
              </div>
              <MediaFactsList media={m} />
              <a class="small" href={m.public_url} target="_blank" rel="noopener noreferrer">
                Open the file<span class="visually-hidden"> {m.filename ?? m.id}</span>
              </a>
            </div>
          </li>
        ))}
      </ul>
      {lib.meta?.has_more ? (
        <button type="button" onClick={lib.loadMore} disabled={lib.loading}>
          {lib.loading ? "Loading…" : "Load more"}
        </button>
      ) : null}
    </>
  );
}
