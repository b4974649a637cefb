import { localInput, timeZone } from "../dates.ts";
import type { Problem } from "../types.ts";
import { ErrorNote } from "../ui.tsx";
import { ProblemList } from "../validation.tsx";
import { WEEKDAYS, type Frequency, type RepeatChoice, type Weekday } from "../repeat-rule.ts";

export type Submit = "now" | "schedule" | "queue";

const DAY_NAMES: Record<Weekday, string> = {
  MO: "Mon",
  TU: "Tue",
  WE: "Wed",
  TH: "Thu",
  FR: "Fri",
  SA: "Sat",
  SU: "Sun",
};
const UNITS: Record<Exclude<Frequency, "none">, string> = { daily: "day(s)", weekly: "week(s)", monthly: "month(s)" };

/** The repeat choices: how often, on which weekdays, and when the series ends. */
function RepeatFields({ repeat, onChange }: { repeat: RepeatChoice; onChange: (r: RepeatChoice) => void }) {
  const set = (p: Partial<RepeatChoice>) => onChange({ ...repeat, ...p });
  return (
    <fieldset class="repeat">
      <legend>Repeat</legend>
      <label for="repeat-frequency">How often</label>
      <select
        id="repeat-frequency"
        value={repeat.frequency}
        onChange={(e) => set({ frequency: (e.target as HTMLSelectElement).value as Frequency })}
      >
        <option value="none">Does not repeat</option>
        <option value="daily">Daily</option>
        <option value="weekly">Weekly</option>
        <option value="monthly">Monthly</option>
      </select>
      {repeat.frequency !== "none" ? (
        <>
          <label for="repeat-interval">Every</label>
          <div class="row">
            <input
              id="repeat-interval"
              type="number"
              min={1}
              max={99}
              value={repeat.interval}
              onInput={(e) => set({ interval: Number((e.target as HTMLInputElement).value) || 1 })}
            />
            <span>{UNITS[repeat.frequency]}</span>
          </div>
          {repeat.frequency === "weekly" ? (
            <fieldset class="repeat-days">
              <legend>On</legend>
              <div class="row">
                {WEEKDAYS.map((d) => (
                  <label key={d} class="check">
                    <input
                      type="checkbox"
                      checked={repeat.days.includes(d)}
                      onChange={(e) =>
                        set({
                          days: (e.target as HTMLInputElement).checked
                            ? [...repeat.days, d]
                            : repeat.days.filter((x) => x !== d),
                        })
                      }
                    />
                    {DAY_NAMES[d]}
                  </label>
                ))}
              </div>
            </fieldset>
          ) : null}
          <fieldset class="ends">
            <legend>Ends</legend>
            <div class="row">
              <label class="check">
                <input
                  type="radio"
                  name="repeat-end"
                  checked={repeat.end.kind === "count"}
                  onChange={() => set({ end: { kind: "count", count: 10 } })}
                />
                After
              </label>
              {repeat.end.kind === "count" ? (
                <>
                  <input
                    type="number"
                    min={1}
                    max={999}
                    aria-label="Number of posts in the series"
                    value={repeat.end.count}
                    onInput={(e) =>
                      set({ end: { kind: "count", count: Number((e.target as HTMLInputElement).value) || 1 } })
                    }
                  />
                  <span>posts</span>
                </>
              ) : null}
            </div>
            <div class="row">
              <label class="check">
                <input
                  type="radio"
                  name="repeat-end"
                  checked={repeat.end.kind === "until"}
                  onChange={() => set({ end: { kind: "until", date: "" } })}
                />
                On a date
              </label>
              {repeat.end.kind === "until" ? (
                <input
                  type="date"
                  aria-label="Last day of the series"
                  value={repeat.end.date}
                  onInput={(e) => set({ end: { kind: "until", date: (e.target as HTMLInputElement).value } })}
                />
              ) : null}
            </div>
          </fieldset>
          <p class="muted small">Each post of the series goes out at the scheduled time of day, in {timeZone()}.</p>
        </>
      ) : null}
    </fieldset>
  );
}

/** Compose's last panel: when to publish (now, at a time, the next free queue slot), repeat, and the buttons. */
export function WhenPanel(props: {
  publishAt: string;
  onPublishAt: (v: string) => void;
  repeat: RepeatChoice;
  onRepeat: (r: RepeatChoice) => void;
  problems: Problem[];
  error: unknown;
  saved: string | null;
  busy: string | null;
  uploading: boolean;
  onSubmit: (when: Submit) => void;
  onSaveDraft: () => void;
}) {
  const disabled = !!props.busy || props.uploading;
  const repeating = props.repeat.frequency !== "none";
  return (
    <section class="panel">
      <label for="publish-at">Schedule for (your time zone: {timeZone()})</label>
      <input
        id="publish-at"
        type="datetime-local"
        value={props.publishAt}
        min={localInput(new Date())}
        onInput={(e) => props.onPublishAt((e.target as HTMLInputElement).value)}
      />
      <ProblemList problems={props.problems} label="Problems with the date" />
      <RepeatFields repeat={props.repeat} onChange={props.onRepeat} />
      <ErrorNote error={props.error} />
      {props.saved ? (
        <p class="note" role="status">
          {props.saved}
        </p>
      ) : null}
      <div class="actions">
        <button type="button" class="primary" disabled={disabled} onClick={() => props.onSubmit("now")}>
          {props.busy === "now" ? "Publishing…" : repeating ? "Start the series now" : "Publish now"}
        </button>
        <button type="button" disabled={disabled} onClick={() => props.onSubmit("schedule")}>
          {props.busy === "schedule" ? "Scheduling…" : repeating ? "Schedule the series" : "Schedule"}
        </button>
        <button
          type="button"
          disabled={disabled || repeating}
          title={repeating ? "A repeating post has its own times; queue slots are for single posts." : undefined}
          onClick={() => props.onSubmit("queue")}
        >
          {props.busy === "queue" ? "Adding…" : "Add to queue"}
        </button>
        <button type="button" disabled={disabled} onClick={props.onSaveDraft}>
          {props.busy === "draft" ? "Saving…" : "Save draft"}
        </button>
      </div>
    </section>
  );
}
