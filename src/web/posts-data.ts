import { api } from "./api.ts";
import type { Post } from "./types.ts";

interface Page {
  data: Post[];
  meta: { has_more: boolean; next_after: string | null; next_after_id: string | null };
}

/** One page of the posts list, with the API's own filters and cursor. */
export function postsPage(filters: Record<string, string | undefined>) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  return api<Page>("GET", `/v1/posts?${q}`);
}

/** The most recent posts of the profile (up to `max`), for the calendar. */
export async function recentPosts(max = 500): Promise<Post[]> {
  const out: Post[] = [];
  let cursor: { after?: string; after_id?: string } = {};
  for (;;) {
    const page = await postsPage({ limit: "100", ...cursor });
    out.push(...page.data);
    if (!page.meta.has_more || out.length >= max || !page.meta.next_after) return out;
    cursor = { after: page.meta.next_after, after_id: page.meta.next_after_id ?? undefined };
  }
}

/** When a post shows on the calendar: its schedule, else when it went out, else when it was made. */
export function postDate(p: Post): Date {
  const published = p.targets.map((t) => t.published_at).find(Boolean);
  return new Date(p.publish_at ?? published ?? p.created_at ?? p.updated_at);
}

export function excerpt(text: string, n = 60) {
  const line = text.split("\n")[0];
  return line.length > n ? `${line.slice(0, n - 1)}…` : line || "(no text)";
}
