import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

/** Client-side navigation: the server answers every page path with the same shell. */
export function navigate(to: string, replace = false) {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return path;
}

/** A real link (works with a middle click and a keyboard) that navigates without reloading. */
export function Link(props: JSX.HTMLAttributes<HTMLAnchorElement> & { href: string; children: ComponentChildren }) {
  const { href, children, onClick, ...rest } = props;
  return (
    <a
      href={href}
      {...rest}
      onClick={(e) => {
        // The caller's handler too (the phone menu closes on it).
        if (typeof onClick === "function") onClick(e);
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** Matches "/posts/:id" against a path; the named parts, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split("/");
  const a = path.replace(/\/$/, "").split("/");
  if (p.length !== a.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(":")) out[p[i].slice(1)] = decodeURIComponent(a[i]);
    else if (p[i] !== a[i]) return null;
  }
  return out;
}
