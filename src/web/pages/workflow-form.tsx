import { useState } from "preact/hooks";
import { CAPTION_PLATFORMS, DestinationSettings, WorkflowSettings } from "../../domain/workflow-settings.ts";
import type { Workflow, WorkflowCreate } from "../../modules/workflows/model.ts";
import { api, ApiFailure } from "../api.ts";
import { besideField, errorPath, placeError, SchemaFields, schemaPaths, type FieldError } from "../schema-fields.tsx";
import type { Account, JsonSchema } from "../types.ts";
import { ErrorNote, PlatformIcon } from "../ui.tsx";

type Values = Record<string, unknown>;
type Settings = NonNullable<WorkflowCreate["settings"]>;

// The settings' own TypeBox declaration is the form: a setting added there shows up here.
const SETTINGS = WorkflowSettings as unknown as JsonSchema;
const DESTINATION = DestinationSettings as unknown as JsonSchema;
/** Settings the API takes only for destinations on the caption platforms (their descriptions say so). */
const CAPTION_ONLY = new Set([
  "caption_ending",
  "caption_position",
  "remove_comment_dm_prompts",
  "adapt_caption",
  "adapt_caption_instructions",
]);

/** A username as its platform writes it: some (Telegram channels) already start with @. */
export const handle = (username: string) => (username.startsWith("@") ? username : `@${username}`);
const accountName = (a: Account | undefined, id: string) => (a ? `${handle(a.username)} (${a.platform})` : id);

/** The settings fields a destination on `platform` shows: its own platform block, never another's. */
const destinationSkip = (platform: string) => (name: string) => {
  const s = DESTINATION.properties?.[name];
  if (s?.type === "object") return name !== platform;
  return CAPTION_ONLY.has(name) && !(CAPTION_PLATFORMS as readonly string[]).includes(platform);
};

/** Every field path the form shows, so an API error lands beside the one it names. */
function shownPaths(targets: Account[]) {
  return [
    "name",
    "description",
    "source_account_id",
    "target_account_ids",
    "is_active",
    "future_content_enabled",
    ...schemaPaths(SETTINGS, "settings", (n) => n === "destination_publish_settings"),
    ...targets.flatMap((a) =>
      schemaPaths(DESTINATION, `settings.destination_publish_settings.${a.id}`, destinationSkip(a.platform)),
    ),
  ];
}

/** Creates a workflow, or edits one (PATCH with the whole form; settings replace the old ones). */
export function WorkflowForm(props: { workflow?: Workflow; accounts: Account[]; onSaved: (w: Workflow) => void }) {
  const w = props.workflow;
  const [name, setName] = useState(w?.name ?? "");
  const [description, setDescription] = useState(w?.description ?? "");
  const [source, setSource] = useState(w?.source_account_id ?? "");
  const [targets, setTargets] = useState<string[]>(w?.target_account_ids ?? []);
  const [active, setActive] = useState(w?.is_active ?? true);
  const [future, setFuture] = useState(w?.future_content_enabled ?? true);
  const [settings, setSettings] = useState<Values>((w?.settings as Values) ?? {});
  const [error, setError] = useState<FieldError | null>(null);
  const [busy, setBusy] = useState(false);

  const byId = new Map(props.accounts.map((a) => [a.id, a]));
  const sources = props.accounts.filter((a) => a.capabilities?.source && a.status !== "disconnected");
  const destinations = props.accounts.filter(
    (a) =>
      a.id !== source && (a.capabilities?.destination ?? true) && (a.status === "active" || targets.includes(a.id)),
  );
  const chosen = targets.map((id) => byId.get(id)).filter((a): a is Account => !!a);
  const perDestination = (settings.destination_publish_settings as Record<string, Values> | undefined) ?? {};

  const setDestination = (id: string, change: (old: Values) => Values) =>
    setSettings((old) => {
      const all = { ...((old.destination_publish_settings as Record<string, Values> | undefined) ?? {}) };
      const v = change(all[id] ?? {});
      if (Object.keys(v).length) all[id] = v;
      else delete all[id];
      return { ...old, destination_publish_settings: all };
    });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    // Settings of accounts no longer among the destinations would be refused: they go with the account.
    const kept = Object.fromEntries(Object.entries(perDestination).filter(([id]) => targets.includes(id)));
    const body = {
      name,
      description: description === "" ? null : description,
      source_account_id: source,
      target_account_ids: targets,
      is_active: active,
      future_content_enabled: future,
      settings: { ...settings, destination_publish_settings: kept } as Settings,
    };
    try {
      const r = w
        ? await api<{ data: Workflow }>("PATCH", `/v1/workflows/${w.id}`, body)
        : await api<{ data: Workflow }>("POST", "/v1/workflows", body);
      props.onSaved(r.data);
    } catch (err) {
      const at = err instanceof ApiFailure ? placeError(errorPath(err.message), shownPaths(chosen)) : null;
      setError({ at, error: err instanceof ApiFailure ? besideField(err, at) : err });
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (path: string) => (error?.at === path ? error.error : null);
  const described = (path: string, id: string) => (error?.at === path ? `${id}-error` : undefined);
  return (
    <form class="workflow-form" onSubmit={submit} noValidate>
      {error && !error.at ? <ErrorNote error={error.error} /> : null}
      <div class="field" data-path="name">
        <label for="wf-name">Name</label>
        <input
          id="wf-name"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
          aria-invalid={fieldError("name") ? true : undefined}
          aria-describedby={described("name", "wf-name")}
        />
        <ErrorNote error={fieldError("name")} id="wf-name-error" />
      </div>
      <div class="field" data-path="description">
        <label for="wf-description">Description (optional)</label>
        <textarea
          id="wf-description"
          rows={2}
          value={description}
          onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)}
        />
        <ErrorNote error={fieldError("description")} id="wf-description-error" />
      </div>
      <div class="field" data-path="source_account_id">
        <label for="wf-source">Copy what this account publishes</label>
        <select
          id="wf-source"
          value={source}
          onChange={(e) => setSource((e.target as HTMLSelectElement).value)}
          aria-invalid={fieldError("source_account_id") ? true : undefined}
          aria-describedby={described("source_account_id", "wf-source")}
        >
          <option value="">Choose a source account</option>
          {sources.map((a) => (
            <option key={a.id} value={a.id}>
              {accountName(a, a.id)}
            </option>
          ))}
        </select>
        {sources.length === 0 ? (
          <small class="muted">None of your accounts is on a platform Crier can read posts from.</small>
        ) : null}
        <ErrorNote error={fieldError("source_account_id")} id="wf-source-error" />
      </div>
      <fieldset class="field" data-path="target_account_ids">
        <legend>To these accounts</legend>
        {destinations.map((a) => (
          <label class="check" key={a.id}>
            <input
              type="checkbox"
              checked={targets.includes(a.id)}
              onChange={(e) =>
                setTargets(
                  (e.target as HTMLInputElement).checked ? [...targets, a.id] : targets.filter((t) => t !== a.id),
                )
              }
            />
            <PlatformIcon platform={a.platform} size={20} />
            {accountName(a, a.id)}
          </label>
        ))}
        <ErrorNote error={fieldError("target_account_ids")} id="wf-targets-error" />
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={active} onChange={(e) => setActive((e.target as HTMLInputElement).checked)} />
        On: copy what is published from now on
      </label>
      <label class="check">
        <input type="checkbox" checked={future} onChange={(e) => setFuture((e.target as HTMLInputElement).checked)} />
        Copy future content (future content enabled)
      </label>
      <details
        class="settings"
        open={!!w || (!!error?.at?.startsWith("settings.") && !error.at.includes("destination_publish_settings"))}
      >
        <summary>Filters and platform settings</summary>
        <SchemaFields
          schema={SETTINGS}
          values={settings}
          onChange={setSettings}
          idPrefix="wf-settings"
          path="settings"
          error={error ?? undefined}
          skip={(n) => n === "destination_publish_settings"}
        />
      </details>
      {chosen.map((a) => (
        <details class="settings destination" key={a.id} open={!!perDestination[a.id] || error?.at?.includes(a.id)}>
          <summary>
            <PlatformIcon platform={a.platform} size={20} /> Settings for {accountName(a, a.id)}
          </summary>
          <div data-path={`settings.destination_publish_settings.${a.id}`}>
            <SchemaFields
              schema={DESTINATION}
              values={perDestination[a.id] ?? {}}
              onChange={(f) => setDestination(a.id, f)}
              idPrefix={`wf-dest-${a.id}`}
              path={`settings.destination_publish_settings.${a.id}`}
              error={error ?? undefined}
              skip={destinationSkip(a.platform)}
            />
            <ErrorNote
              error={error?.at === `settings.destination_publish_settings.${a.id}` ? error.error : null}
              id={`wf-dest-${a.id}-error`}
            />
          </div>
        </details>
      ))}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {w ? "Save workflow" : "Create workflow"}
        </button>
      </div>
    </form>
  );
}
