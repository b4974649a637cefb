import { useEffect, useState } from "preact/hooks";
import { api } from "../api.ts";
import { count, STATUS_ADVICE, type AnalyticsAccount, type Overview } from "../analytics-data.ts";
import { timeZone } from "../dates.ts";
import { Link } from "../router.tsx";
import { ErrorNote, PageTitle, PlatformIcon, useLoad, when } from "../ui.tsx";
import { DayBars, DayTable } from "./analytics-chart.tsx";
import { PostsTable } from "./analytics-posts.tsx";

const RANGES = [7, 30, 90, 365];
/** While the engine reads the platforms, look again this often, so new numbers appear without a reload. */
const POLL_MS = 5_000;

export function AnalyticsPage() {
  const [days, setDays] = useState(30);
  const [refreshError, setRefreshError] = useState<unknown>(null);
  const [asked, setAsked] = useState(false);
  const overview = useLoad(
    () =>
      api<{ data: Overview }>(
        "GET",
        `/v1/analytics?days=${days}&limit=100&time_zone=${encodeURIComponent(timeZone())}`,
      ).then((r) => r.data),
    [days],
  );
  const o = overview.data;
  useEffect(() => {
    if (!o?.refreshing) return;
    const t = setTimeout(() => void overview.reload(), POLL_MS);
    return () => clearTimeout(t);
  }, [o]);

  const refresh = async () => {
    setRefreshError(null);
    try {
      await api("POST", "/v1/analytics/refresh");
      setAsked(true);
      await overview.reload();
    } catch (e) {
      setRefreshError(e);
    }
  };

  return (
    <>
      <PageTitle
        actions={
          <button type="button" onClick={() => void refresh()}>
            Read the numbers now
          </button>
        }
      >
        Analytics
      </PageTitle>
      <div class="range-picker" role="group" aria-label="Range">
        {RANGES.map((n) => (
          <button key={n} type="button" aria-pressed={days === n} onClick={() => setDays(n)}>
            {n} days
          </button>
        ))}
      </div>
      <ErrorNote error={refreshError ?? overview.error} />
      <div aria-live="polite">
        {o?.refreshing ? (
          <p class="note refreshing">
            {asked ? "Crier is reading the latest numbers from the platforms" : "Some numbers are due to be read"}: this
            page updates on its own within a minute.
          </p>
        ) : null}
      </div>
      {o ? (
        <>
          <p class="small muted">
            {when(o.range.start)} to {when(o.range.end)} · numbers last read {when(o.updated_at)}
          </p>
          <section aria-labelledby="accounts-h">
            <h2 id="accounts-h">Accounts</h2>
            {o.accounts.length ? (
              <ul class="analytics-accounts">
                {o.accounts.map((a) => (
                  <AccountCard key={a.id} account={a} />
                ))}
              </ul>
            ) : (
              <p class="muted">
                No accounts yet: <Link href="/accounts">connect one</Link>.
              </p>
            )}
          </section>
          <section class="panel" aria-labelledby="chart-h">
            <h2 id="chart-h">Per day</h2>
            <p class="small muted">By the day each copy was published, in your time zone ({timeZone()}).</p>
            <div class="charts">
              <DayBars id="views-chart" label="Views" days={o.daily} pick={(d) => d.views} />
              <DayBars
                id="engagement-chart"
                label="Interactions (likes, comments, shares, saves)"
                days={o.daily}
                pick={(d) => d.engagement}
              />
            </div>
            <DayTable days={o.daily} />
          </section>
          <section aria-labelledby="posts-h">
            <h2 id="posts-h">Posts</h2>
            {o.posts.length ? (
              <PostsTable posts={o.posts} />
            ) : (
              <p class="muted">No published post with numbers in this range yet.</p>
            )}
            {o.truncated ? (
              <p class="small muted">The 100 newest posts are shown; choose a shorter range to see the rest.</p>
            ) : null}
          </section>
        </>
      ) : overview.loading ? (
        <p class="muted">Loading…</p>
      ) : null}
    </>
  );
}

function AccountCard({ account: a }: { account: AnalyticsAccount }) {
  const advice = STATUS_ADVICE[a.metrics_status];
  return (
    <li class="card analytics-account" data-account={a.username ?? a.id}>
      <div class="row">
        <PlatformIcon platform={a.platform} size={28} />
        <strong>{a.username ?? "(unnamed account)"}</strong>
        <span class="muted small">{a.platform}</span>
      </div>
      <dl class="figures">
        <div>
          <dt>Followers</dt>
          <dd>{count(a.followers)}</dd>
        </div>
        <div>
          <dt>Posts with views</dt>
          <dd>{count(a.posts_with_views)}</dd>
        </div>
        <div>
          <dt>Median views</dt>
          <dd>{a.median_views === null ? "—" : count(Math.round(a.median_views))}</dd>
        </div>
      </dl>
      {a.followers === null ? <p class="small muted">The platform does not give a follower count here.</p> : null}
      {a.median_views === null ? <p class="small muted">A median needs 3 posts with views in the range.</p> : null}
      {advice ? (
        <p class={`note status-${a.metrics_status}`} data-status={a.metrics_status}>
          <strong>
            {a.metrics_status === "reconnect"
              ? "Reconnect needed"
              : a.metrics_status === "limited"
                ? "Some numbers missing"
                : "Platform unavailable"}
            :{" "}
          </strong>
          {advice} {a.metrics_status === "unavailable" ? null : <Link href="/accounts">Go to Accounts</Link>}
        </p>
      ) : null}
    </li>
  );
}
