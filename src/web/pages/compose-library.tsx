/**
 * Compose's "Choose from library": a native modal <dialog> (focus kept inside, Escape closes) listing
 * the profile's uploads; choosing one adds its public_url to the post, uploading nothing again.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { factList, isVideo, MediaThumb } from "../media-facts.tsx";
import type { Media } from "../types.ts";
import { ErrorNote } from "../ui.tsx";
import { useMediaLibrary } from "./media.tsx";

export function LibraryPicker({ onPick }: { onPick: (m: Media) => void }) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDialogElement>(null);
  // Loaded when first opened: compose does not pay for the library until it is asked for.
  const [asked, setAsked] = useState(false);
  const lib = useMediaLibrary(asked);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  const show = () => {
    setAsked(true);
    setOpen(true);
  };
  return (
    <>
      <button type="button" onClick={show}>
        Choose from library
      </button>
      <dialog ref={ref} class="library-picker" aria-labelledby="library-title" onClose={() => setOpen(false)}>
        <h2 id="library-title">Choose from library</h2>
        <ErrorNote error={lib.error} />
        {lib.loading && !lib.items.length ? <p role="status">Loading…</p> : null}
        {!lib.loading && !lib.error && !lib.items.length ? <p class="muted">No uploads yet.</p> : null}
        <ul class="picker-list">
          {lib.items.map((m) => {
            const name = m.filename ?? m.id;
            const facts = factList(m)
              .map(([, v]) => v)
              .join(", ");
            return (
              <li key={m.id}>
                <button
                  type="button"
                  class="pick"
                  onClick={() => {
                    onPick(m);
                    setOpen(false);
                  }}
                >
                  <MediaThumb media={m} decorative />
                  <span>
                    <strong>Add {name}</strong>
                    <span class="small muted">
                      {isVideo(m) ? "Video" : "Image"}: {facts}
                    </span>
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
        <div class="actions">
          {lib.meta?.has_more ? (
            <button type="button" onClick={lib.loadMore} disabled={lib.loading}>
              Load more
            </button>
          ) : null}
          <button type="button" onClick={() => setOpen(false)}>
            Close
          </button>
        </div>
      </dialog>
    </>
  );
}
