/**
 * A target's first_comment checked at creation against the plugin's firstComment (src/platform/sdk.ts):
 * a platform without one, an empty comment, one longer than the platform's comment limit (counted in the
 * platform's own unit), or one on a later item of a thread is a 400 naming the target, never a failure
 * after the post went out.
 */
import { countText, UNIT_NAMES } from "../text.ts";
import type { Plugin } from "../sdk.ts";
import type { Problem } from "./content-check.ts";

export interface FirstCommentCheck {
  plugin: Plugin;
  /** The target's first_comment; undefined or null: none. */
  firstComment?: string | null;
  /** A later item of a thread (the account appeared before in the targets). */
  reply?: boolean;
}

/** Every rule the first comment breaks; field "first_comment" (the caller prefixes the target). */
export function firstCommentProblems({ plugin, firstComment, reply }: FirstCommentCheck): Problem[] {
  if (firstComment == null) return [];
  const problem = (code: string, message: string, hint: string): Problem[] => [
    { code, message, hint, field: "first_comment" },
  ];
  const support = plugin.firstComment;
  if (!support)
    return problem(
      "first_comment_unsupported",
      `${plugin.displayName} takes no first comment.`,
      "Remove first_comment from this target; capabilities.first_comment of GET /v1/accounts says which platforms take one.",
    );
  if (reply)
    return problem(
      "first_comment_on_thread_item",
      "first_comment belongs to the first item of a thread (the first target of this account).",
      "Put first_comment on the first target of this account, or make it the thread's next item.",
    );
  if (firstComment.trim() === "")
    return problem(
      "first_comment_empty",
      "first_comment is empty.",
      "Give the comment's text, or leave first_comment out (or null) for no comment.",
    );
  const { max, unit } = support.textLimit;
  const length = countText(firstComment, unit);
  if (length > max)
    return problem(
      "first_comment_too_long",
      `first_comment is ${length} ${UNIT_NAMES[unit]} long; a ${support.kind} on ${plugin.displayName} takes at most ${max}.`,
      "Shorten the first comment (media_requirements.first_comment of GET /v1/accounts gives the limit).",
    );
  return [];
}
