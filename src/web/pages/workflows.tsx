import { useState } from "preact/hooks";
import type { Workflow } from "../../modules/workflows/model.ts";
import { api } from "../api.ts";
import { Link, navigate } from "../router.tsx";
import type { Account } from "../types.ts";
import { ErrorNote, PageTitle, PlatformIcon, useLoad, when } from "../ui.tsx";
import { handle, WorkflowForm } from "./workflow-form.tsx";

export const loadAccounts = () => api<{ data: Account[] }>("GET", "/v1/accounts").then((r) => r.data);

/** On or off, in words as well as colour. */
export function OnOff({ on }: { on: boolean }) {
  return <span class={`badge ${on ? "status-on" : "status-off"}`}>{on ? "on" : "off"}</span>;
}

/** The workflows of the profile, and a form to create one. */
export function WorkflowsPage() {
  const list = useLoad(() => api<{ data: Workflow[] }>("GET", "/v1/workflows?limit=100").then((r) => r.data));
  const accounts = useLoad(loadAccounts);
  const [creating, setCreating] = useState(false);
  const byId = new Map((accounts.data ?? []).map((a) => [a.id, a]));
  const who = (id: string) => {
    const a = byId.get(id);
    return a ? (
      <span class="who-account">
        <PlatformIcon platform={a.platform} size={18} /> {handle(a.username)}
      </span>
    ) : (
      <span>{id}</span>
    );
  };
  return (
    <>
      <PageTitle
        actions={
          <button type="button" class="primary" aria-expanded={creating} onClick={() => setCreating(!creating)}>
            New workflow
          </button>
        }
      >
        Workflows
      </PageTitle>
      <p class="muted">
        A workflow copies what one account publishes to other accounts, with filters and per-destination captions.
      </p>
      <ErrorNote error={list.error ?? accounts.error} />
      {creating && accounts.data ? (
        <section class="panel" aria-labelledby="new-workflow">
          <h2 id="new-workflow">New workflow</h2>
          <WorkflowForm accounts={accounts.data} onSaved={(w) => navigate(`/workflows/${w.id}`)} />
        </section>
      ) : null}
      {list.data && list.data.length === 0 ? <p>No workflows yet.</p> : null}
      {list.data?.length ? (
        <ul class="workflow-list">
          {list.data.map((w) => (
            <li key={w.id} class="panel workflow-row">
              <div class="row">
                <Link href={`/workflows/${w.id}`} class="grow">
                  <strong>{w.name}</strong>
                </Link>
                <OnOff on={w.is_active} />
              </div>
              <p class="flow">
                {who(w.source_account_id)} <span aria-hidden="true">→</span>
                <span class="visually-hidden">copied to</span>{" "}
                {w.target_account_ids.map((id) => (
                  <span key={id}>{who(id)} </span>
                ))}
              </p>
              <p class="small muted">
                Last checked {when(w.last_checked)}
                {w.last_error ? <span class="wf-error"> · Last check failed: {w.last_error}</span> : null}
              </p>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
