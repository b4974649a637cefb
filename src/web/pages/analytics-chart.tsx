import { useEffect, useState } from "preact/hooks";
import type { AnalyticsDay } from "../analytics-data.ts";
import { count } from "../analytics-data.ts";

const H = 180;
const PAD = { top: 12, right: 8, bottom: 26, left: 48 };

const dayLabel = (date: string, long = false) =>
  // Noon UTC of the API's calendar day: the same day in every time zone the browser may be in.
  new Date(`${date}T12:00:00Z`).toLocaleDateString(undefined, {
    month: "short",
    day: "numeric",
    ...(long ? { year: "numeric" } : {}),
    timeZone: "UTC",
  });

/**
 * The drawing's width in its own units, kept equal to its width on screen: its labels stay at their
 * font size instead of shrinking with the picture on a phone.
 */
function useWidth(): [(el: HTMLElement | null) => void, number] {
  const [w, setW] = useState(640);
  const [el, setEl] = useState<HTMLElement | null>(null);
  useEffect(() => {
    if (!el) return;
    const observer = new ResizeObserver(() => setW(Math.max(240, Math.round(el.clientWidth))));
    observer.observe(el);
    return () => observer.disconnect();
  }, [el]);
  return [setEl, w];
}

const shortDay = (date: string) =>
  new Date(`${date}T12:00:00Z`).toLocaleDateString(undefined, { dateStyle: "short", timeZone: "UTC" });

/** A round top for the axis: 1, 2 or 5 times a power of ten, at least the highest value. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

/**
 * One number per day as bars, in plain SVG. Bars and their heights carry the meaning, never colour; the
 * picture is summarised for screen readers, and the exact numbers are in the table beside it.
 */
export function DayBars(props: {
  days: AnalyticsDay[];
  pick: (d: AnalyticsDay) => number | null;
  label: string;
  id: string;
}) {
  const [measure, W] = useWidth();
  const values = props.days.map(props.pick);
  const max = niceMax(Math.max(0, ...values.map((v) => v ?? 0)));
  const total = values.reduce<number>((a, v) => a + (v ?? 0), 0);
  const best = props.days[values.indexOf(Math.max(...values.map((v) => v ?? -1)))];
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const step = innerW / Math.max(1, props.days.length);
  const barW = Math.max(1, step * 0.7);
  const y = (v: number) => PAD.top + innerH - (v / max) * innerH;
  const ticks = [0, max / 2, max];
  const labelled = [0, Math.floor((props.days.length - 1) / 2), props.days.length - 1];
  const summary =
    total > 0 && best
      ? `${props.label}: ${count(total)} in all; the most, ${count(props.pick(best))}, on ${dayLabel(best.date, true)}.`
      : `${props.label}: none in this range.`;
  return (
    <figure class="day-chart" ref={measure}>
      <figcaption id={`${props.id}-h`}>{props.label}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${props.id}-h ${props.id}-s`}>
        {ticks.map((t) => (
          <g key={t}>
            <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
            <text class="tick" x={PAD.left - 6} y={y(t) + 4} text-anchor="end">
              {count(Math.round(t))}
            </text>
          </g>
        ))}
        {props.days.map((d, i) => {
          const v = values[i];
          if (!v) return null;
          return (
            <rect
              key={d.date}
              class="bar"
              x={PAD.left + i * step + (step - barW) / 2}
              y={y(v)}
              width={barW}
              height={y(0) - y(v)}
            >
              <title>{`${dayLabel(d.date, true)}: ${count(v)}`}</title>
            </rect>
          );
        })}
        {[...new Set(labelled)].map((i) =>
          props.days[i] ? (
            <text
              key={i}
              class="tick"
              x={PAD.left + i * step + step / 2}
              y={H - 8}
              text-anchor={i === 0 ? "start" : i === props.days.length - 1 ? "end" : "middle"}
            >
              {dayLabel(props.days[i].date)}
            </text>
          ) : null,
        )}
      </svg>
      <p id={`${props.id}-s`} class="small muted">
        {summary}
      </p>
    </figure>
  );
}

/** The chart's numbers as text: every day with posts (days without any are left out, and said so). */
export function DayTable({ days }: { days: AnalyticsDay[] }) {
  const busy = days.filter((d) => d.posts > 0);
  return (
    <details class="day-numbers">
      <summary>The numbers per day</summary>
      {busy.length ? (
        <table class="day-table">
          <caption class="visually-hidden">Views and interactions per day, by day of publishing</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Copies</th>
              <th scope="col">Views</th>
              <th scope="col">Interactions</th>
            </tr>
          </thead>
          <tbody>
            {busy.map((d) => (
              <tr key={d.date}>
                <th scope="row">{shortDay(d.date)}</th>
                <td>{d.posts}</td>
                <td>{count(d.views)}</td>
                <td>{count(d.engagement)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p class="small muted">
        {busy.length ? "Days without a published copy are left out. " : "Nothing was published in this range. "}
        Each day counts the copies published that day, with their numbers as last read; "—" is a number the platforms of
        that day do not give.
      </p>
    </details>
  );
}
