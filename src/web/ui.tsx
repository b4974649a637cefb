import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure } from "./api.ts";

/** An API error as the API said it: message, then hint. */
export function ErrorNote({ error, id }: { error: unknown; id?: string }) {
  if (!error) return null;
  const e = error instanceof ApiFailure ? error : null;
  return (
    <div class="note error" role="alert" id={id}>
      <strong>{e?.message ?? String((error as Error)?.message ?? error)}</strong>
      {e?.hint ? <span class="hint">{e.hint}</span> : null}
    </div>
  );
}

/** Loads data for a page; `reload` fetches again after an action. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const run = useCallback(() => {
    setState((s) => ({ ...s, loading: true }));
    return load().then(
      (data) => setState({ data, loading: false }),
      (error) => setState({ error, loading: false }),
    );
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return { ...state, reload: run };
}

const PLATFORM_COLORS: Record<string, string> = {
  bluesky: "#1185fe",
  facebook: "#1877f2",
  farcaster: "#855dcd",
  nostr: "#8e44ad",
  telegram: "#229ed9",
  instagram: "#d62976",
  linkedin: "#0a66c2",
  pinterest: "#e60023",
  reddit: "#ff4500",
  snapchat: "#e6c700",
  threads: "#101010",
  tiktok: "#010101",
  twitter: "#0f1419",
  vimeo: "#1ab7ea",
  youtube: "#ff0000",
  mastodon: "#6364ff",
  google_business: "#1a73e8",
  discord: "#5865f2",
  slack: "#4a154b",
};

const PLATFORM_MARKS: Record<string, string> = {
  twitter: "X",
  tiktok: "Tk",
  threads: "@",
  telegram: "Tg",
  google_business: "G",
  discord: "Dc",
  slack: "Sl",
};

/** A platform's mark in its brand colour, drawn here so no image is fetched from anywhere. */
export function PlatformIcon({ platform, size = 32 }: { platform: string; size?: number }) {
  const mark = PLATFORM_MARKS[platform] ?? platform[0]?.toUpperCase() ?? "?";
  return (
    <svg class="platform-icon" width={size} height={size} viewBox="0 0 32 32" aria-hidden="true">
      <rect width="32" height="32" rx="8" fill={PLATFORM_COLORS[platform] ?? "#666"} />
      <text x="16" y="21.5" text-anchor="middle" font-size={mark.length > 1 ? 13 : 16} font-weight="700" fill="#fff">
        {mark}
      </text>
    </svg>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status.replace(/_/g, " ")}</span>;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A confirmation in a native modal dialog: focus is trapped and Escape cancels. */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function PageTitle({ children, actions }: { children: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${typeof children === "string" ? children : "Crier"} · Crier`;
  }, [children]);
  return (
    <div class="page-title">
      <h1 tabIndex={-1}>{children}</h1>
      {actions ? <div class="actions">{actions}</div> : null}
    </div>
  );
}
