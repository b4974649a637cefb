import { useState } from "preact/hooks";
import { api } from "../api.ts";
import type { Account, AccountCheck, ConnectResult, DeleteResult, PlatformInfo } from "../types.ts";
import { Confirm, ErrorNote, PageTitle, PlatformIcon, StatusBadge, useLoad, when } from "../ui.tsx";
import { useAtRisk } from "../account-alerts.tsx";
import { AccountHealth, needsReconnect } from "./account-health.tsx";
import { QueueEditor } from "./queue-editor.tsx";

/** Starts the platform's real connect flow: the browser goes to the provider (OAuth) or Crier's hosted form. */
async function connect(platform: string) {
  const r = await api<{ data: ConnectResult }>("POST", `/v1/accounts/connect/${platform}`);
  const url = r.data.authorization_url ?? r.data.hosted_url;
  if (url) location.assign(url);
}

export function AccountsPage() {
  const accounts = useLoad(() => api<{ data: Account[] }>("GET", "/v1/accounts").then((r) => r.data));
  const platforms = useLoad(() => api<{ data: PlatformInfo[] }>("GET", "/auth/platforms").then((r) => r.data));
  const [connectError, setConnectError] = useState<{ platform: string; error: unknown } | null>(null);
  const [confirming, setConfirming] = useState<Account | null>(null);
  const [result, setResult] = useState<DeleteResult | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [checks, setChecks] = useState<Record<string, AccountCheck>>({});
  const atRisk = useAtRisk();

  const start = (platform: string) =>
    connect(platform).catch((error) => {
      setConnectError({ platform, error });
    });

  const disconnect = async (account: Account) => {
    setConfirming(null);
    try {
      const r = await api<{ data: DeleteResult }>("DELETE", `/v1/accounts/${account.id}`);
      setResult(r.data);
      await accounts.reload();
    } catch (e) {
      setActionError(e);
    }
  };

  return (
    <>
      <PageTitle>Accounts</PageTitle>
      <ErrorNote error={accounts.error ?? actionError} />
      {result ? (
        <div class="note" role="status">
          Disconnected. {result.message ?? ""}
          {result.provider_revocation_required && result.provider_revocation_url ? (
            <>
              {" "}
              <a href={result.provider_revocation_url} target="_blank" rel="noopener noreferrer">
                Revoke access on the platform too
              </a>
              .
            </>
          ) : null}
        </div>
      ) : null}
      <section aria-labelledby="connected">
        <h2 id="connected">Connected</h2>
        {accounts.data?.length === 0 ? <p class="muted">No accounts yet: connect one below.</p> : null}
        <ul class="cards">
          {accounts.data?.map((a) => (
            <li class="card account" key={a.id} data-account={a.username}>
              <PlatformIcon platform={a.platform} size={40} />
              <div class="grow">
                <div class="row">
                  <strong>{a.username}</strong>
                  <StatusBadge status={a.status} />
                </div>
                <div class="muted small">
                  {a.platform} · connected {when(a.created_at)}
                </div>
                <AccountHealth
                  account={a}
                  check={checks[a.id] ?? null}
                  onCheck={(c) => setChecks((all) => ({ ...all, [a.id]: c }))}
                />
                {a.status === "active" && a.capabilities?.destination ? <QueueEditor account={a} /> : null}
              </div>
              <div class="actions">
                {a.status !== "active" ||
                needsReconnect(a, checks[a.id]) ||
                atRisk.some((r) => r.account_id === a.id) ? (
                  <button type="button" class="primary" id={`reconnect-${a.id}`} onClick={() => void start(a.platform)}>
                    Reconnect<span class="visually-hidden"> {a.username}</span>
                  </button>
                ) : null}
                {a.status !== "disconnected" ? (
                  <button type="button" onClick={() => setConfirming(a)}>
                    Disconnect
                  </button>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="connect-new">
        <h2 id="connect-new">Connect an account</h2>
        <ul class="platform-grid">
          {platforms.data?.map((p) => (
            <li key={p.platform}>
              <button
                type="button"
                class="platform-button"
                onClick={() => void start(p.platform)}
                aria-describedby={connectError?.platform === p.platform ? `connect-error-${p.platform}` : undefined}
              >
                <PlatformIcon platform={p.platform} />
                <span>Connect {p.display_name}</span>
              </button>
              {connectError?.platform === p.platform ? (
                <ErrorNote error={connectError.error} id={`connect-error-${p.platform}`} />
              ) : null}
            </li>
          ))}
        </ul>
      </section>
      <Confirm
        open={!!confirming}
        title={`Disconnect ${confirming?.username ?? ""}?`}
        confirmLabel="Disconnect"
        onCancel={() => setConfirming(null)}
        onConfirm={() => confirming && void disconnect(confirming)}
      >
        <p>
          Crier forgets this account's credentials and stops publishing to it. Its posts and their history stay. Some
          platforms also need you to revoke Crier's access on their side.
        </p>
      </Confirm>
    </>
  );
}
