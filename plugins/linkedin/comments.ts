/**
 * First comments under a LinkedIn post, made and found again as the account's author: the member, or
 * for a company page the organization (w_organization_social "Post, comment and like posts on behalf of
 * an organization", Posts API "Permissions", read 2026-11-26).
 */
import type { CommentJob, CommentOutcome, FindResult, PluginContext } from "../../src/platform/sdk.ts";
import { findComment, oldestOf } from "../../src/platform/find-comment.ts";
import { headers, postUrl } from "./rest.ts";

const socialActions = (urn: string) => `/rest/socialActions/${encodeURIComponent(urn)}/comments`;
const commentUrl = (parent: string, comment: string) => `${postUrl(parent)}?commentUrn=${encodeURIComponent(comment)}`;

/**
 * The first comment: `POST /rest/socialActions/{shareUrn|ugcPostUrn}/comments` with the member as `actor`,
 * the post as `object` and `message.text` (Comments API, "Create a Comment", read 2026-11-26), under
 * w_member_social ("Post, comment and like posts on behalf of an authenticated member"). The message is
 * attributed text, not little text: it is sent as written. LinkedIn answers 201 with the comment, whose
 * URN (`urn:li:comment:(<post>,<id>)`) names it; x-restli-id carries its id.
 */
export async function publishComment(ctx: PluginContext, job: CommentJob): Promise<CommentOutcome> {
  if (!ctx.credentials.author_urn)
    return {
      kind: "auth_expired",
      reason: "the stored LinkedIn credentials lack the member; connect the account again",
    };
  const parent = job.parent.platformPostId;
  const res = await ctx.http.request<{ commentUrn?: string; $URN?: string; id?: string }>(
    "POST",
    socialActions(parent),
    {
      json: { actor: ctx.credentials.author_urn, object: parent, message: { text: job.text } },
      headers: headers(ctx),
      creates: true,
    },
  );
  if (!res.ok) return res.outcome;
  const id = res.body?.id ?? res.headers.get("x-restli-id");
  const urn = res.body?.commentUrn ?? res.body?.$URN ?? (id ? `urn:li:comment:(${parent},${id})` : null);
  if (!urn) return { kind: "unknown", reason: "LinkedIn accepted the comment but named no comment" };
  return { kind: "published", platformPostId: urn, url: commentUrl(parent, urn) };
}

interface LiComment {
  actor?: string;
  commentUrn?: string;
  $URN?: string;
  id?: string;
  message?: { text?: string };
  created?: { time?: number };
}

/**
 * The member's comments under the post (GET on the same resource, newest first). LinkedIn lets an app read
 * comments only with r_member_social, which it grants to approved developers: without it the read is
 * refused and the answer is cannot_tell.
 */
export function findPostedComment(
  ctx: PluginContext,
  job: CommentJob,
  window: { since: Date; until: Date },
): Promise<FindResult> {
  const parent = job.parent.platformPostId;
  return findComment(job, window, "comment(s) under the post", async () => {
    const res = await ctx.http.request<{ elements?: LiComment[]; paging?: { total?: number; count?: number } }>(
      "GET",
      socialActions(parent),
      { query: { count: 100 }, headers: headers(ctx) },
    );
    if (!res.ok) throw new Error(res.outcome.reason);
    const all = res.body.elements ?? [];
    const at = (c: LiComment) => new Date(c.created?.time ?? 0);
    const urnOf = (c: LiComment) => c.commentUrn ?? c.$URN ?? `urn:li:comment:(${parent},${c.id})`;
    return {
      comments: all
        .filter((c) => c.actor === ctx.credentials.author_urn)
        .map((c) => ({
          id: urnOf(c),
          url: commentUrl(parent, urnOf(c)),
          text: c.message?.text ?? "",
          createdAt: at(c),
        })),
      more: (res.body.paging?.total ?? all.length) > all.length,
      oldest: oldestOf(all.map(at)),
    };
  });
}
