import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { localInput, timeZone } from "../dates.ts";
import { MediaPreview } from "../media-preview.tsx";
import { navigate } from "../router.tsx";
import { PostNumbers } from "./post-numbers.tsx";
import type { Post, PostTarget } from "../types.ts";
import { Confirm, ErrorNote, PageTitle, PlatformIcon, StatusBadge, useLoad, when } from "../ui.tsx";

/** What a user can do about a target's failure, by its code. */
const ERROR_HINTS: Record<string, string> = {
  auth_required: "Reconnect the account on the Accounts page, then retry.",
  account_disconnected: "The account was disconnected: connect it again, then retry.",
  outcome_unknown: "The platform may have published it: check the account before retrying, or you may post twice.",
  retries_exhausted: "The platform kept failing; retry later.",
};

const WAITING = ["scheduled", "pending"];

export function PostDetailPage({ params }: { params: Record<string, string> }) {
  const post = useLoad(() => api<{ data: Post }>("GET", `/v1/posts/${params.id}`).then((r) => r.data), [params.id]);
  const [error, setError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState(false);
  const p = post.data;

  const act = async (method: string, path: string, body?: unknown) => {
    setError(null);
    try {
      await api(method, path, body);
      await post.reload();
    } catch (e) {
      setError(e);
    }
  };
  // Publishing is asynchronous: look again shortly so the page shows the outcome without a reload.
  const publishNow = async () => {
    await act("POST", `/v1/posts/${params.id}/publish`);
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const fresh = await api<{ data: Post }>("GET", `/v1/posts/${params.id}`);
      if (!["processing", "queued"].includes(fresh.data.status)) break;
    }
    await post.reload();
  };

  return (
    <>
      <PageTitle
        actions={
          p ? (
            <>
              {p.status === "scheduled" || p.status === "queued" ? (
                <button type="button" class="primary" onClick={() => void publishNow()}>
                  Publish now
                </button>
              ) : null}
              {p.targets.some((t) => t.status === "failed") ? (
                <button type="button" onClick={() => void act("POST", `/v1/posts/${p.id}/retry`)}>
                  Retry failed
                </button>
              ) : null}
              {p.targets.some((t) => WAITING.includes(t.status)) ? (
                <button type="button" onClick={() => void act("POST", `/v1/posts/${p.id}/cancel`)}>
                  Cancel post
                </button>
              ) : null}
              <button type="button" class="danger" onClick={() => setDeleting(true)}>
                Delete
              </button>
            </>
          ) : null
        }
      >
        Post
      </PageTitle>
      <ErrorNote error={post.error ?? error} />
      {p ? (
        <div class="detail">
          <section class="panel">
            <div class="row">
              <StatusBadge status={p.status} />
              <span class="muted">
                {p.publish_at ? `Scheduled for ${when(p.publish_at)}` : `Created ${when(p.created_at)}`}
              </span>
            </div>
            {p.status === "scheduled" && p.publish_at ? (
              <MoveForm
                publishAt={p.publish_at}
                onMove={(at) => act("PATCH", `/v1/posts/${p.id}`, { publish_at: at.toISOString() })}
              />
            ) : null}
            {p.series_id ? (
              <p class="note" data-series={p.series_id}>
                Part of a repeating series: the next post is made once this one is out. Changes to the series (PATCH
                /v1/series/{p.series_id}) reach every post not yet published.
              </p>
            ) : null}
            <p class="content">{p.content || <span class="muted">(no text)</span>}</p>
            {p.media.length ? (
              <ul class="media-list">
                {p.media.map((m) => (
                  <li key={m.url} class="media-item">
                    <MediaPreview item={m} />
                  </li>
                ))}
              </ul>
            ) : null}
          </section>
          <section class="panel" aria-labelledby="targets-h">
            <h2 id="targets-h">Accounts</h2>
            <ul class="targets">
              {p.targets.map((t) => (
                <TargetRow key={t.target_post_id} post={p} target={t} act={act} />
              ))}
            </ul>
          </section>
          {p.targets.some((t) => t.status === "published") ? <PostNumbers postId={p.id} /> : null}
        </div>
      ) : null}
      <Confirm
        open={deleting}
        title="Delete this post?"
        confirmLabel="Delete"
        onCancel={() => setDeleting(false)}
        onConfirm={async () => {
          setDeleting(false);
          try {
            await api("DELETE", `/v1/posts/${params.id}`);
            navigate("/posts");
          } catch (e) {
            setError(e);
          }
        }}
      >
        <p>Crier forgets the post. What was already published stays on the platforms.</p>
      </Confirm>
    </>
  );
}

/**
 * Reschedules to any date and time: the way to move a post without dragging it on the calendar (keyboard
 * and screen-reader users, phones). The same PATCH of publish_at as the drag.
 */
function MoveForm(props: { publishAt: string; onMove: (at: Date) => Promise<void> }) {
  const [value, setValue] = useState(() => localInput(new Date(props.publishAt)));
  return (
    <form
      class="move-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (value) void props.onMove(new Date(value));
      }}
    >
      <label for="move-to">Move to (your time zone: {timeZone()})</label>
      <div class="row">
        <input
          id="move-to"
          type="datetime-local"
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <button type="submit">Move</button>
      </div>
    </form>
  );
}

function TargetRow(props: { post: Post; target: PostTarget; act: (m: string, path: string) => Promise<void> }) {
  const t = props.target;
  const base = `/v1/posts/${props.post.id}/targets/${t.target_post_id}`;
  return (
    <li class="target card" data-target={t.username ?? ""}>
      <PlatformIcon platform={t.platform ?? "?"} />
      <div class="grow">
        <div class="row">
          <strong>{t.username ?? "(removed account)"}</strong>
          {t.target_variant ? <span class="muted small">{t.target_variant}</span> : null}
          <StatusBadge status={t.status} />
        </div>
        {t.platform_post_url ? (
          <a href={t.platform_post_url} target="_blank" rel="noopener noreferrer" class="platform-link">
            View on {t.platform}
          </a>
        ) : null}
        {t.published_at ? <div class="muted small">Published {when(t.published_at)}</div> : null}
        {t.queue_slot && t.status === "scheduled" ? (
          <div class="muted small">In the posting queue: {when(t.queue_slot)}</div>
        ) : null}
        {t.first_comment ? <FirstComment comment={t.first_comment} /> : null}
        {t.adjustments?.length ? (
          <div class="note adjusted">
            <strong>Adjusted to fit {t.platform}</strong>
            <ul>
              {t.adjustments.map((a) => (
                <li key={a.code + a.message}>{a.message}</li>
              ))}
            </ul>
          </div>
        ) : null}
        {t.error ? (
          <div class="note error">
            <strong>{t.error}</strong>
            {t.error_code ? (
              <span class="hint">
                {ERROR_HINTS[t.error_code] ?? ""} <code>{t.error_code}</code>
              </span>
            ) : null}
          </div>
        ) : null}
      </div>
      <div class="actions">
        {t.status === "failed" ? (
          <button type="button" onClick={() => void props.act("POST", `${base}/retry`)}>
            Retry
          </button>
        ) : null}
        {WAITING.includes(t.status) ? (
          <button type="button" onClick={() => void props.act("POST", `${base}/cancel`)}>
            Cancel
          </button>
        ) : null}
      </div>
    </li>
  );
}

const COMMENT_STATES: Record<string, string> = {
  waiting: "waits for the post",
  pending: "about to be posted",
  processing: "being posted",
  published: "posted",
  failed: "failed",
  unknown: "may or may not have been posted",
};

/** A target's first comment and what became of it; its failure never changes the post's own status. */
function FirstComment({ comment: c }: { comment: NonNullable<PostTarget["first_comment"]> }) {
  return (
    <div class={`first-comment${c.status === "failed" ? " note error" : ""}`} data-status={c.status}>
      <div class="small">
        <strong>First comment</strong> <span class="muted">({COMMENT_STATES[c.status] ?? c.status})</span>
        {c.platform_comment_url ? (
          <>
            {" "}
            <a href={c.platform_comment_url} target="_blank" rel="noopener noreferrer">
              view
            </a>
          </>
        ) : null}
      </div>
      <p class="content small">{c.text}</p>
      {c.error ? (
        <span class="hint">
          {c.error} {c.error_code ? <code>{c.error_code}</code> : null}
        </span>
      ) : null}
    </div>
  );
}
