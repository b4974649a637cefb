import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { excerpt, postDate, recentPosts } from "../posts-data.ts";
import { Link } from "../router.tsx";
import type { Post } from "../types.ts";
import { ErrorNote, PageTitle, useLoad } from "../ui.tsx";

const DAY_MS = 86_400_000;
const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

const dayKey = (d: Date) => `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;
const startOfDay = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate());
/** Monday of the week holding `d`. */
const startOfWeek = (d: Date) => new Date(startOfDay(d).getTime() - ((d.getDay() + 6) % 7) * DAY_MS);

function daysOf(view: "month" | "week", anchor: Date): Date[] {
  const first =
    view === "month" ? startOfWeek(new Date(anchor.getFullYear(), anchor.getMonth(), 1)) : startOfWeek(anchor);
  const count = view === "month" ? 42 : 7;
  // Built from calendar fields, not by adding milliseconds, so a daylight-saving change keeps midnight.
  return Array.from({ length: count }, (_, i) => new Date(first.getFullYear(), first.getMonth(), first.getDate() + i));
}

export function CalendarPage() {
  const posts = useLoad(() => recentPosts());
  const [view, setView] = useState<"month" | "week">("month");
  const [anchor, setAnchor] = useState(() => new Date());
  const [error, setError] = useState<unknown>(null);
  const [dropTarget, setDropTarget] = useState<string | null>(null);

  const days = daysOf(view, anchor);
  const byDay = new Map<string, Post[]>();
  for (const p of posts.data ?? []) {
    const key = dayKey(postDate(p));
    byDay.set(key, [...(byDay.get(key) ?? []), p]);
  }
  for (const list of byDay.values()) list.sort((a, b) => postDate(a).getTime() - postDate(b).getTime());

  const move = (step: number) =>
    setAnchor((a) =>
      view === "month" ? new Date(a.getFullYear(), a.getMonth() + step, 1) : new Date(a.getTime() + step * 7 * DAY_MS),
    );

  /** Keeps the time of day and moves the post to `day`: a PATCH of publish_at like any client would send. */
  const reschedule = async (postId: string, day: Date) => {
    const post = posts.data?.find((p) => p.id === postId);
    if (!post) return;
    const at = postDate(post);
    const next = new Date(day.getFullYear(), day.getMonth(), day.getDate(), at.getHours(), at.getMinutes());
    setError(null);
    try {
      await api("PATCH", `/v1/posts/${postId}`, { publish_at: next.toISOString() });
      await posts.reload();
    } catch (e) {
      setError(e);
    }
  };

  const title =
    view === "month"
      ? anchor.toLocaleDateString(undefined, { month: "long", year: "numeric" })
      : `Week of ${days[0].toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" })}`;
  const today = dayKey(new Date());

  return (
    <>
      <PageTitle
        actions={
          <>
            <div class="segmented" role="group" aria-label="View">
              <button type="button" aria-pressed={view === "month"} onClick={() => setView("month")}>
                Month
              </button>
              <button type="button" aria-pressed={view === "week"} onClick={() => setView("week")}>
                Week
              </button>
            </div>
            <button type="button" onClick={() => move(-1)} aria-label="Previous">
              ‹
            </button>
            <button type="button" onClick={() => setAnchor(new Date())}>
              Today
            </button>
            <button type="button" onClick={() => move(1)} aria-label="Next">
              ›
            </button>
          </>
        }
      >
        Calendar
      </PageTitle>
      <h2 class="calendar-title">{title}</h2>
      <ErrorNote error={posts.error ?? error} />
      <p class="legend">
        {["scheduled", "queued", "processing", "published", "partial", "failed", "cancelled"].map((s) => (
          <span key={s} class={`badge status-${s}`}>
            {s}
          </span>
        ))}
        <span class="muted small">
          Drag a scheduled post to another day to move it, or open it to move it to any date and time.
        </span>
      </p>
      {/* A list of days, not an ARIA grid: a grid promises arrow-key navigation between cells, and each day
          here is reached with Tab through its posts. On a phone the days with posts become a plain list. */}
      <section class={`calendar ${view}`} aria-label={title}>
        <div class="weekdays" aria-hidden="true">
          {WEEKDAYS.map((d) => (
            <div key={d}>{d}</div>
          ))}
        </div>
        <ol class="days">
          {days.map((d) => {
            const key = dayKey(d);
            const outside = view === "month" && d.getMonth() !== anchor.getMonth();
            const list = byDay.get(key) ?? [];
            return (
              <li
                key={key}
                data-date={`${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`}
                class={`day${outside ? " outside" : ""}${key === today ? " today" : ""}${dropTarget === key ? " drop" : ""}${list.length ? "" : " empty"}`}
                onDragOver={(e) => {
                  e.preventDefault();
                  setDropTarget(key);
                }}
                onDragLeave={() => setDropTarget(null)}
                onDrop={(e) => {
                  e.preventDefault();
                  setDropTarget(null);
                  const id = e.dataTransfer?.getData("text/plain");
                  if (id) void reschedule(id, d);
                }}
              >
                <span class="date" aria-hidden="true">
                  {d.getDate()}
                </span>
                <span class="date-long">
                  {d.toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long" })}
                </span>
                {list.length ? (
                  <ul>
                    {list.map((p) => (
                      <li key={p.id}>
                        <Link
                          href={`/posts/${p.id}`}
                          class={`event status-${p.status}`}
                          data-post={p.id}
                          draggable={p.status === "scheduled"}
                          onDragStart={(e) => e.dataTransfer?.setData("text/plain", p.id)}
                          title={`${p.status} · ${postDate(p).toLocaleString()}`}
                        >
                          <time>
                            {postDate(p).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })}
                          </time>{" "}
                          <span class="visually-hidden">{p.status}: </span>
                          {excerpt(p.content, 40)}
                        </Link>
                      </li>
                    ))}
                  </ul>
                ) : null}
              </li>
            );
          })}
        </ol>
        {!days.some((d) => byDay.has(dayKey(d))) ? (
          <p class="calendar-empty muted">No posts {view === "month" ? "this month" : "this week"}.</p>
        ) : null}
      </section>
    </>
  );
}
