import { useState } from "preact/hooks";
import { WEBHOOK_EVENTS } from "../../domain/webhook-events.ts";
import type { Webhook } from "../../modules/webhooks/model.ts";
import { api, ApiFailure } from "../api.ts";
import { besideField, errorPath, placeError } from "../schema-fields.tsx";
import { Confirm, ErrorNote, PageTitle, useLoad, when } from "../ui.tsx";
import { WebhookDeliveries } from "./webhook-deliveries.tsx";
import { OnOff } from "./workflows.tsx";

type WithSecret = Webhook & { secret: string };
const FIELDS = ["url", "events", "description"];

/** Where an error about the create form belongs: the field its message names ("url …", "body.events …"). */
const fieldOf = (e: unknown) => {
  if (!(e instanceof ApiFailure)) return null;
  const word = /^(\w+) /.exec(e.message)?.[1] ?? "";
  return placeError(errorPath(e.message) ?? (FIELDS.includes(word) ? word : null), FIELDS);
};

/** A secret is shown once, by the answer that made it: this is the only place to copy it. */
function SecretNote({ secret, label, id }: { secret: string; label: string; id: string }) {
  return (
    <div class="note token" role="status">
      <strong>{label}</strong> Copy it now: Crier shows it only once.
      <label for={id}>Signing secret</label>
      <input id={id} class="secret" readOnly value={secret} onFocus={(e) => (e.target as HTMLInputElement).select()} />
    </div>
  );
}

function CreateWebhook({ onCreated }: { onCreated: (w: WithSecret) => void }) {
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<string[]>(["*"]);
  const [error, setError] = useState<{ at: string | null; error: unknown } | null>(null);
  const at = (f: string) => (error?.at === f ? error.error : null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const body = { url, events, ...(description ? { description } : {}) };
      const r = await api<{ data: WithSecret }>("POST", "/v1/webhooks", body);
      setUrl("");
      setDescription("");
      onCreated(r.data);
    } catch (err) {
      const at = fieldOf(err);
      setError({ at, error: err instanceof ApiFailure ? besideField(err, at) : err });
    }
  };
  const toggle = (ev: string, on: boolean) => setEvents(on ? [...events, ev] : events.filter((x) => x !== ev));
  return (
    <form onSubmit={submit} noValidate>
      {error && !error.at ? <ErrorNote error={error.error} /> : null}
      <div class="field" data-path="url">
        <label for="hook-url">Endpoint URL</label>
        <input
          id="hook-url"
          type="url"
          value={url}
          placeholder="https://example.com/crier-events"
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
          aria-invalid={at("url") ? true : undefined}
          aria-describedby={at("url") ? "hook-url-error" : undefined}
        />
        <ErrorNote error={at("url")} id="hook-url-error" />
      </div>
      <div class="field" data-path="description">
        <label for="hook-description">Description (optional)</label>
        <input
          id="hook-description"
          value={description}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
        <ErrorNote error={at("description")} id="hook-description-error" />
      </div>
      <fieldset class="field event-grid" data-path="events">
        <legend>Events</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={events.includes("*")}
            onChange={(e) => toggle("*", (e.target as HTMLInputElement).checked)}
          />
          All events
        </label>
        {WEBHOOK_EVENTS.map((ev) => (
          <label class="check" key={ev}>
            <input
              type="checkbox"
              checked={events.includes(ev)}
              disabled={events.includes("*")}
              onChange={(e) => toggle(ev, (e.target as HTMLInputElement).checked)}
            />
            <code>{ev}</code>
          </label>
        ))}
        <ErrorNote error={at("events")} id="hook-events-error" />
      </fieldset>
      <button type="submit" class="primary">
        Add endpoint
      </button>
    </form>
  );
}

/** One endpoint: its events, on/off, the secret's rotation, a test event and the deliveries. */
function Endpoint(props: { hook: Webhook; onChanged: () => Promise<unknown> }) {
  const { hook } = props;
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [confirm, setConfirm] = useState<"rotate" | "delete" | null>(null);
  const [deliveries, setDeliveries] = useState(0);
  const [tested, setTested] = useState<string | null>(null);
  const act = async (run: () => Promise<void>) => {
    setError(null);
    setConfirm(null);
    try {
      await run();
    } catch (e) {
      setError(e);
    }
  };
  const rotate = () =>
    act(async () => {
      const r = await api<{ data: WithSecret }>("POST", `/v1/webhooks/${hook.id}/rotate-secret`);
      setSecret(r.data.secret);
      await props.onChanged();
    });
  const test = () =>
    act(async () => {
      const r = await api<{ data: { status: string } }>("POST", `/v1/webhooks/${hook.id}/test`);
      setTested(r.data.status);
      setDeliveries(deliveries + 1);
    });
  const toggle = () =>
    act(async () => {
      await api("PATCH", `/v1/webhooks/${hook.id}`, { is_active: !hook.is_active });
      await props.onChanged();
    });
  const remove = () =>
    act(async () => {
      await api("DELETE", `/v1/webhooks/${hook.id}`);
      await props.onChanged();
    });
  const titleId = `hook-${hook.id}`;
  return (
    <li class="panel webhook">
      <div class="row">
        <h2 id={titleId} class="grow hook-url">
          {hook.url}
        </h2>
        <OnOff on={hook.is_active} />
      </div>
      {hook.description ? <p>{hook.description}</p> : null}
      <p class="small">Events: {hook.events.map((e) => (e === "*" ? "all events" : e)).join(", ")}</p>
      {hook.note ? (
        <div class="note error">
          Crier turned this endpoint off {when(hook.note.at)}: {hook.note.reason}
        </div>
      ) : null}
      {hook.previous_secret_expires_at ? (
        <p class="small muted">The previous secret also signs until {when(hook.previous_secret_expires_at)}.</p>
      ) : null}
      {secret ? <SecretNote secret={secret} label="New signing secret." id={`secret-${hook.id}`} /> : null}
      {tested ? (
        <p class="note" role="status">
          Test event sent: {tested}.
        </p>
      ) : null}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" onClick={() => void test()}>
          Send a test event
        </button>
        <button type="button" onClick={() => setConfirm("rotate")}>
          Rotate secret
        </button>
        <button type="button" onClick={() => void toggle()}>
          {hook.is_active ? "Pause" : "Resume"}
        </button>
        <button type="button" class="danger" onClick={() => setConfirm("delete")}>
          Delete
        </button>
      </div>
      <WebhookDeliveries hookId={hook.id} version={deliveries} />
      <Confirm
        open={confirm !== null}
        title={confirm === "rotate" ? "Rotate the signing secret?" : "Delete this endpoint?"}
        confirmLabel={confirm === "rotate" ? "Rotate secret" : "Delete endpoint"}
        onConfirm={() => void (confirm === "rotate" ? rotate() : remove())}
        onCancel={() => setConfirm(null)}
      >
        {confirm === "rotate"
          ? "A new secret is made and shown once; for 24 hours deliveries carry signatures with both."
          : "No more events are sent to it."}
      </Confirm>
    </li>
  );
}

/** The profile's webhook endpoints: add one (its secret shown once), and look after each. */
export function WebhooksPage() {
  const list = useLoad(() => api<{ data: Webhook[] }>("GET", "/v1/webhooks?limit=100").then((r) => r.data));
  const [created, setCreated] = useState<WithSecret | null>(null);
  const [adding, setAdding] = useState(false);
  return (
    <>
      <PageTitle
        actions={
          <button type="button" class="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
            New endpoint
          </button>
        }
      >
        Webhooks
      </PageTitle>
      <p class="muted">
        Crier POSTs events to your endpoints, signed in the Standard Webhooks format with each endpoint's secret.
      </p>
      <ErrorNote error={list.error} />
      {created ? (
        <SecretNote secret={created.secret} label={`Endpoint added: ${created.url}.`} id="secret-new" />
      ) : null}
      {adding ? (
        <section class="panel" aria-labelledby="new-hook">
          <h2 id="new-hook">New endpoint</h2>
          <CreateWebhook
            onCreated={(w) => {
              setCreated(w);
              setAdding(false);
              void list.reload();
            }}
          />
        </section>
      ) : null}
      {list.data && list.data.length === 0 ? <p>No endpoints yet.</p> : null}
      <ul class="webhook-list">
        {list.data?.map((h) => (
          <Endpoint key={h.id} hook={h} onChanged={list.reload} />
        ))}
      </ul>
    </>
  );
}
