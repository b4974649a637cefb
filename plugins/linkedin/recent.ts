/** The posts of a LinkedIn account (a member or a company page), for workflows and the reconciler. */
import type { PluginContext, RecentPost } from "../../src/platform/sdk.ts";
import { headers, postUrl, unescapeLittleText } from "./rest.ts";

interface LiPost {
  id?: string;
  author?: string;
  commentary?: string;
  createdAt?: number;
  publishedAt?: number;
  lifecycleState?: string;
  content?: { media?: { id?: string }; multiImage?: { images?: { id?: string }[] } };
}

/**
 * The account's recent posts, newest first: `GET /rest/posts?q=author&author={urn}` (Posts API, "Find
 * Posts by Authors", read 2026-11-26), under r_organization_social for a page and r_member_social (granted
 * to approved developers only) for a member. Media come back as image and video URNs, not files, so
 * each is listed as the post's page, which a workflow cannot carry.
 */
export async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const author = String(ctx.credentials.author_urn ?? "");
  const res = await ctx.http.request<{ elements?: LiPost[] }>("GET", "/rest/posts", {
    query: { q: "author", author, count: 50, sortBy: "LAST_MODIFIED" },
    headers: { ...headers(ctx), "x-restli-method": "FINDER" },
  });
  if (!res.ok) throw new Error(`LinkedIn posts of ${author}: ${res.outcome.reason}`);
  const out: RecentPost[] = [];
  for (const p of res.body.elements ?? []) {
    if (!p.id || (p.lifecycleState && p.lifecycleState !== "PUBLISHED")) continue;
    const createdAt = new Date(p.publishedAt ?? p.createdAt ?? 0);
    if (since && createdAt < since) continue;
    const ids = p.content?.media?.id ? [p.content.media.id] : (p.content?.multiImage?.images ?? []).map((i) => i.id);
    const kinds = ids.map((id) => (String(id).startsWith("urn:li:video:") ? "video" : "image") as "video" | "image");
    out.push({
      platformPostId: p.id,
      url: postUrl(p.id),
      content: unescapeLittleText(p.commentary ?? ""),
      media: kinds.map((type) => ({ url: postUrl(p.id!), type, downloadable: false })),
      createdAt,
      kind: kinds.includes("video") ? "video" : kinds.length ? "image" : "text",
    });
  }
  return out;
}
