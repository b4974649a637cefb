/** Which source posts a workflow copies: content_filters of its settings (pure). */
import type { RecentPost } from "../platform/sdk.ts";
import type { WorkflowSettings } from "../domain/workflow-settings.ts";

export interface Skip {
  code: "filter_type" | "filter_hashtag_include" | "filter_hashtag_exclude";
  reason: string;
}

const HASHTAG = /(?:^|[^\p{L}\p{N}_&#])#([\p{L}\p{N}_]+)/gu;
const norm = (tag: string) => tag.replace(/^#/, "").toLowerCase();

export const hashtagsOf = (text: string) => new Set([...text.matchAll(HASHTAG)].map((m) => norm(m[1])));

/** Null when the post passes; otherwise the filter that stopped it. Exclude wins over include. */
export function filterSkip(post: Pick<RecentPost, "kind" | "content">, settings: WorkflowSettings): Skip | null {
  const f = settings.content_filters ?? {};
  if (f.types?.[post.kind] === false)
    return {
      code: "filter_type",
      reason: `content_filters.types.${post.kind} is false: ${post.kind} posts are not copied.`,
    };
  const tags = hashtagsOf(post.content);
  const excluded = (f.hashtags?.exclude ?? []).map(norm).find((t) => tags.has(t));
  if (excluded)
    return {
      code: "filter_hashtag_exclude",
      reason: `The post has #${excluded}, listed in content_filters.hashtags.exclude.`,
    };
  const include = (f.hashtags?.include ?? []).map(norm);
  if (include.length && !include.some((t) => tags.has(t))) {
    return {
      code: "filter_hashtag_include",
      reason: `The post has none of content_filters.hashtags.include (${include.map((t) => `#${t}`).join(", ")}).`,
    };
  }
  return null;
}
