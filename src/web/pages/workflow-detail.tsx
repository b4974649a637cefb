import { useState } from "preact/hooks";
import type { DeleteResult } from "../../modules/accounts/model.ts";
import type { Workflow, WorkflowItem } from "../../modules/workflows/model.ts";
import { api } from "../api.ts";
import { Link, navigate } from "../router.tsx";
import { Confirm, ErrorNote, PageTitle, useLoad, when } from "../ui.tsx";
import { WorkflowForm } from "./workflow-form.tsx";
import { WorkflowItems } from "./workflow-items.tsx";
import { loadAccounts, OnOff } from "./workflows.tsx";

interface CheckResult {
  checked_at: string;
  found: number;
  items: WorkflowItem[];
}

/** One workflow: switch it on or off, check its source now, edit every setting, and read its log. */
export function WorkflowPage({ params }: { params: Record<string, string> }) {
  const id = params.id;
  const wf = useLoad(() => api<{ data: Workflow }>("GET", `/v1/workflows/${id}`).then((r) => r.data), [id]);
  const items = useLoad(
    () => api<{ data: WorkflowItem[] }>("GET", `/v1/workflows/${id}/items?limit=100`).then((r) => r.data),
    [id],
  );
  const accounts = useLoad(loadAccounts);
  const [actionError, setActionError] = useState<unknown>(null);
  const [checked, setChecked] = useState<CheckResult | null>(null);
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [saved, setSaved] = useState(false);

  const act = async (run: () => Promise<void>) => {
    setBusy(true);
    setActionError(null);
    try {
      await run();
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (on: boolean) =>
    act(async () => {
      await api("PATCH", `/v1/workflows/${id}`, { is_active: on });
      setSaved(false);
      await Promise.all([wf.reload(), items.reload()]);
    });
  const checkNow = () =>
    act(async () => {
      const r = await api<{ data: CheckResult }>("POST", `/v1/workflows/${id}/check`);
      setChecked(r.data);
      await Promise.all([wf.reload(), items.reload()]);
    });
  const remove = () =>
    act(async () => {
      setDeleting(false);
      await api<{ data: DeleteResult }>("DELETE", `/v1/workflows/${id}`);
      navigate("/workflows");
    });

  const w = wf.data;
  return (
    <>
      <p class="small">
        <Link href="/workflows">All workflows</Link>
      </p>
      <PageTitle
        actions={
          w ? (
            <>
              <OnOff on={w.is_active} />
              <button type="button" disabled={busy} onClick={() => void toggle(!w.is_active)}>
                {w.is_active ? "Turn off" : "Turn on"}
              </button>
              <button type="button" disabled={busy || !w.is_active} onClick={() => void checkNow()}>
                Check now
              </button>
              <button type="button" class="danger" onClick={() => setDeleting(true)}>
                Delete
              </button>
            </>
          ) : null
        }
      >
        {w?.name ?? "Workflow"}
      </PageTitle>
      <ErrorNote error={wf.error ?? actionError} />
      {w ? (
        <p class="small muted">
          Last checked {when(w.last_checked)}
          {w.last_enabled_at ? ` · copies what was published after ${when(w.last_enabled_at)}` : ""}
        </p>
      ) : null}
      {w?.last_error ? (
        <div class="note error" role="alert">
          The last check of the source failed: {w.last_error}
        </div>
      ) : null}
      {checked ? (
        <div class="note" role="status">
          Checked {when(checked.checked_at)}: {checked.found} new source post{checked.found === 1 ? "" : "s"} found,{" "}
          {checked.items.length} taken.
        </div>
      ) : null}
      <section class="panel" aria-labelledby="wf-log">
        <h2 id="wf-log">What it did</h2>
        <ErrorNote error={items.error} />
        {items.data && accounts.data ? <WorkflowItems items={items.data} accounts={accounts.data} /> : null}
      </section>
      {w && accounts.data ? (
        <section class="panel" aria-labelledby="wf-edit">
          <h2 id="wf-edit">Settings</h2>
          <WorkflowForm
            // Remounted when switched on or off, in the same render as the buttons, so it shows the new state.
            key={`${w.id}:${w.is_active}`}
            workflow={w}
            accounts={accounts.data}
            onSaved={() => {
              setSaved(true);
              void wf.reload();
            }}
          />
          {saved ? (
            <p class="note" role="status">
              Saved.
            </p>
          ) : null}
        </section>
      ) : null}
      <Confirm
        open={deleting}
        title="Delete this workflow?"
        confirmLabel="Delete workflow"
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(false)}
      >
        Its queued copies are removed; posts it already made stay.
      </Confirm>
    </>
  );
}
