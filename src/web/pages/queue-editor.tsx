import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { timeZone } from "../dates.ts";
import type { Account } from "../types.ts";
import { ErrorNote, when } from "../ui.tsx";

/** The wire shapes of GET/PUT /v1/accounts/{id}/queue and GET …/queue/next. */
interface Slot {
  day: string;
  time: string;
}
interface Queue {
  time_zone: string;
  slots: Slot[];
}
interface FreeSlot {
  at: string;
  local: string;
}

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const ZONES: string[] =
  typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [timeZone()];

/**
 * An account's posting queue, opened from its card: weekly slots in a time zone, the next free ones, and
 * shuffling what is queued. Loaded when opened, so the accounts list costs no extra call per account.
 */
export function QueueEditor({ account }: { account: Account }) {
  const [queue, setQueue] = useState<Queue | null>(null);
  const [next, setNext] = useState<FreeSlot[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const base = `/v1/accounts/${account.id}/queue`;
  const id = (what: string) => `q-${account.id}-${what}`;

  const load = async () => {
    setError(null);
    try {
      const [q, n] = await Promise.all([
        api<{ data: Queue }>("GET", base),
        api<{ data: FreeSlot[] }>("GET", `${base}/next?count=5`),
      ]);
      setQueue({
        time_zone: q.data.time_zone === "UTC" && !q.data.slots.length ? timeZone() : q.data.time_zone,
        slots: q.data.slots,
      });
      setNext(n.data);
    } catch (e) {
      setError(e);
    }
  };
  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(null);
    setStatus(null);
    try {
      await what();
      setStatus(done);
      await load();
    } catch (e) {
      setError(e);
    }
  };
  const setSlot = (i: number, p: Partial<Slot>) =>
    queue && setQueue({ ...queue, slots: queue.slots.map((s, j) => (j === i ? { ...s, ...p } : s)) });

  return (
    <details class="queue" onToggle={(e) => (e.target as HTMLDetailsElement).open && !queue && void load()}>
      <summary>Posting queue</summary>
      <ErrorNote error={error} />
      {queue ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void act(() => api("PUT", base, queue), "Queue saved.");
          }}
        >
          <label for={id("zone")}>Time zone</label>
          <select
            id={id("zone")}
            value={queue.time_zone}
            onChange={(e) => setQueue({ ...queue, time_zone: (e.target as HTMLSelectElement).value })}
          >
            {(ZONES.includes(queue.time_zone) ? ZONES : [queue.time_zone, ...ZONES]).map((z) => (
              <option key={z}>{z}</option>
            ))}
          </select>
          <ul class="slots" aria-label={`Weekly slots of ${account.username}`}>
            {queue.slots.map((s, i) => (
              <li key={i} class="row">
                <select
                  aria-label={`Slot ${i + 1} day`}
                  value={s.day}
                  onChange={(e) => setSlot(i, { day: (e.target as HTMLSelectElement).value })}
                >
                  {DAYS.map((d) => (
                    <option key={d} value={d}>
                      {d}
                    </option>
                  ))}
                </select>
                <input
                  type="time"
                  aria-label={`Slot ${i + 1} time`}
                  value={s.time}
                  onInput={(e) => setSlot(i, { time: (e.target as HTMLInputElement).value })}
                />
                <button
                  type="button"
                  class="link"
                  onClick={() => setQueue({ ...queue, slots: queue.slots.filter((_, j) => j !== i) })}
                >
                  Remove slot {i + 1}
                </button>
              </li>
            ))}
          </ul>
          <div class="actions">
            <button
              type="button"
              onClick={() => setQueue({ ...queue, slots: [...queue.slots, { day: "mon", time: "09:00" }] })}
            >
              Add a slot
            </button>
            <button type="submit" class="primary">
              Save queue
            </button>
            <button
              type="button"
              onClick={() => void act(() => api("POST", `${base}/shuffle`, {}), "Queued posts shuffled.")}
            >
              Shuffle queued posts
            </button>
          </div>
          {status ? (
            <p class="note" role="status">
              {status}
            </p>
          ) : null}
          <p class="small">Next free slots:</p>
          {next.length ? (
            <ul class="small" aria-label={`Next free slots of ${account.username}`}>
              {next.map((n) => (
                <li key={n.at}>
                  <time dateTime={n.at}>{when(n.at)}</time>{" "}
                  <span class="muted">
                    ({n.local.replace("T", " ")} {queue.time_zone})
                  </span>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted small">None: add a slot and save.</p>
          )}
        </form>
      ) : (
        <p class="boot">Loading…</p>
      )}
    </details>
  );
}
