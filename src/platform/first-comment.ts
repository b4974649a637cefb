/**
 * First comments on platforms where a comment under a post is a reply made like any post (X, Threads,
 * Bluesky, Nostr) or where the plugin's thread reply already is a comment (Reddit): the plugin's own
 * publish, with the comment's text and the published post as the parent of a one-item thread.
 */
import type { CommentJob, CommentOutcome, Outcome, PluginContext, PublishJob } from "./sdk.ts";

/** The publish job that makes `comment` a reply to its post: text only, the post as parent and root. */
export function replyJob(comment: CommentJob): PublishJob {
  return {
    content: comment.text,
    media: [],
    options: comment.options,
    idempotencyToken: comment.idempotencyToken,
    replyTo: { platformPostId: comment.parent.platformPostId, rootPlatformPostId: comment.parent.platformPostId },
  };
}

/**
 * Posts the comment through `publish` as a reply. A comment is never "submitted": where the platform was
 * still processing it, `submitted` says what that means. "unknown" (the default): it may appear later by
 * itself. "retryable": nothing is published until Crier publishes it (a Threads container that was not
 * ready), so the next attempt starts over safely.
 */
export async function publishAsReply(
  publish: (ctx: PluginContext, job: PublishJob) => Promise<Outcome>,
  ctx: PluginContext,
  comment: CommentJob,
  submitted: "unknown" | "retryable" = "unknown",
): Promise<CommentOutcome> {
  const outcome = await publish(ctx, replyJob(comment));
  if (outcome.kind !== "submitted") return outcome;
  return submitted === "retryable"
    ? { kind: "retryable", reason: "The platform was still preparing the reply; nothing was published yet." }
    : { kind: "unknown", reason: "The platform was still processing the comment when it answered." };
}
