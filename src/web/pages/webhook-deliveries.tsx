import { useState } from "preact/hooks";
import type { WebhookDelivery } from "../../modules/webhooks/model.ts";
import { api } from "../api.ts";
import { ErrorNote, StatusBadge, useLoad, when } from "../ui.tsx";

/**
 * An endpoint's deliveries, newest first: each event's status and every attempt with its HTTP status,
 * duration and the start of the answer; any of them can be sent again. `version` reloads the list.
 */
export function WebhookDeliveries({ hookId, version }: { hookId: string; version: number }) {
  const list = useLoad(
    () => api<{ data: WebhookDelivery[] }>("GET", `/v1/webhooks/${hookId}/deliveries?limit=50`).then((r) => r.data),
    [hookId, version],
  );
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const redeliver = async (d: WebhookDelivery) => {
    setError(null);
    setBusy(d.id);
    try {
      await api("POST", `/v1/webhooks/${hookId}/deliveries/${d.id}/redeliver`);
      await list.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  return (
    <details class="deliveries" open>
      <summary>Deliveries{list.data ? ` (${list.data.length})` : ""}</summary>
      <ErrorNote error={list.error ?? error} />
      {list.data && list.data.length === 0 ? <p class="small muted">No deliveries yet.</p> : null}
      <ul class="delivery-list">
        {list.data?.map((d) => (
          <li key={d.id} class="delivery" data-status={d.status} data-event={d.event}>
            <div class="row">
              <code class="grow">{d.event}</code>
              <StatusBadge status={d.status} />
              <button type="button" disabled={busy === d.id} onClick={() => void redeliver(d)}>
                Redeliver
                <span class="visually-hidden">
                  {" "}
                  {d.event} of {when(d.created_at)}
                </span>
              </button>
            </div>
            <p class="small muted">
              {when(d.created_at)} · {d.attempts.length} attempt{d.attempts.length === 1 ? "" : "s"}
              {d.delivered_at ? ` · delivered ${when(d.delivered_at)}` : ""}
              {d.next_retry_at ? ` · next try ${when(d.next_retry_at)}` : ""}
            </p>
            <ol class="attempts" aria-label={`Attempts of ${d.event}`}>
              {d.attempts.map((a, i) => (
                <li key={i} class="attempt">
                  <span class={`http ${a.status_code && a.status_code < 300 ? "ok" : "bad"}`}>
                    {a.status_code ? `HTTP ${a.status_code}` : "No answer"}
                  </span>{" "}
                  {when(a.attempted_at)}, {a.duration_ms} ms
                  {a.error ? <span class="small"> · {a.error}</span> : null}
                  {a.response_excerpt ? <pre class="excerpt">{a.response_excerpt}</pre> : null}
                </li>
              ))}
            </ol>
          </li>
        ))}
      </ul>
    </details>
  );
}
