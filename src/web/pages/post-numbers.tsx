import { api } from "../api.ts";
import { count, rate, STATUS_ADVICE, type TargetNumbers } from "../analytics-data.ts";
import { Link } from "../router.tsx";
import { ErrorNote, PlatformIcon, useLoad, when } from "../ui.tsx";

const KINDS = ["views", "likes", "comments", "shares", "saves"] as const;

/** A published post's numbers per target and when they were read; a number the platform does not give is left out. */
export function PostNumbers({ postId }: { postId: string }) {
  const numbers = useLoad(
    () => api<{ data: { targets: TargetNumbers[] } }>("GET", `/v1/posts/${postId}/analytics`).then((r) => r.data),
    [postId],
  );
  const published = numbers.data?.targets.filter((t) => t.published_at) ?? [];
  if (!numbers.error && !published.length) return null;
  return (
    <section class="panel post-numbers" aria-labelledby="numbers-h">
      <h2 id="numbers-h">Numbers</h2>
      <ErrorNote error={numbers.error} />
      <ul>
        {published.map((t) => {
          const given = KINDS.filter((k) => t[k] !== null);
          const advice = STATUS_ADVICE[t.metrics_status];
          return (
            <li key={t.target_post_id} class="target-numbers" data-platform={t.platform}>
              <div class="row">
                <PlatformIcon platform={t.platform} size={20} />
                <strong>{t.platform}</strong>
                {t.target_variant ? <span class="muted small">{t.target_variant}</span> : null}
              </div>
              {given.length ? (
                <dl class="figures">
                  {given.map((k) => (
                    <div key={k}>
                      <dt>{k[0].toUpperCase() + k.slice(1)}</dt>
                      <dd>{count(t[k])}</dd>
                    </div>
                  ))}
                  {t.engagement_rate !== null ? (
                    <div>
                      <dt>Engagement rate</dt>
                      <dd>{rate(t.engagement_rate)}</dd>
                    </div>
                  ) : null}
                </dl>
              ) : (
                <p class="small muted">No numbers from {t.platform} yet.</p>
              )}
              <p class="small muted">{t.last_updated ? `Last read ${when(t.last_updated)}` : "Not read yet"}</p>
              {advice ? (
                <p class={`note status-${t.metrics_status}`} data-status={t.metrics_status}>
                  {advice} {t.metrics_status === "unavailable" ? null : <Link href="/accounts">Go to Accounts</Link>}
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
