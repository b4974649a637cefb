import { useState } from "preact/hooks";
import { SCOPES } from "../../http/scopes.ts";
import { api } from "../api.ts";
import { navigate } from "../router.tsx";
import { useSession } from "../session.ts";
import type { ApiKey, SessionInfo } from "../types.ts";
import { Confirm, ErrorNote, PageTitle, useLoad, when } from "../ui.tsx";

export function PreferencesPage() {
  return (
    <>
      <PageTitle>Preferences</PageTitle>
      <ApiKeys />
      <Profiles />
      <SignOutEverywhere />
    </>
  );
}

function ApiKeys() {
  const keys = useLoad(() => api<{ data: ApiKey[] }>("GET", "/auth/keys").then((r) => r.data));
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ key: ApiKey; token: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const data = new FormData(form);
    const expires = String(data.get("expires") ?? "");
    setError(null);
    try {
      const r = await api<{ data: { key: ApiKey; token: string } }>("POST", "/auth/keys", {
        name: String(data.get("name")),
        scopes: data.getAll("scopes").map(String),
        ...(expires ? { expires_at: new Date(`${expires}T23:59:59`).toISOString() } : {}),
      });
      setCreated(r.data);
      setCopied(false);
      form.reset();
      await keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  const copy = async () => {
    if (!created) return;
    await navigator.clipboard?.writeText(created.token).catch(() => {});
    setCopied(true);
  };
  const revoke = async (key: ApiKey) => {
    setRevoking(null);
    try {
      await api("DELETE", `/auth/keys/${key.id}`);
      await keys.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="panel" aria-labelledby="keys-h">
      <h2 id="keys-h">API keys</h2>
      <p class="muted">Keys let programs use the Crier API for this profile. A token is shown once, when created.</p>
      <form class="key-form" onSubmit={create}>
        <label for="key-name">Key name</label>
        <input id="key-name" name="name" required maxLength={100} placeholder="e.g. Zapier" />
        <fieldset>
          <legend>Scopes</legend>
          <div class="scope-grid">
            {SCOPES.map((s) => (
              <label key={s} class="check">
                <input type="checkbox" name="scopes" value={s} defaultChecked={s.endsWith(":read")} /> {s}
              </label>
            ))}
          </div>
        </fieldset>
        <label for="key-expires">Expires (optional)</label>
        <input id="key-expires" name="expires" type="date" />
        <ErrorNote error={error} />
        <button type="submit" class="primary">
          Create key
        </button>
      </form>
      {created ? (
        <div class="note token" role="status">
          <p>
            <strong>Copy the token for "{created.key.name}" now:</strong> it is not shown again.
          </p>
          <div class="row">
            <code id="new-token">{created.token}</code>
            <button type="button" onClick={() => void copy()}>
              {copied ? "Copied" : "Copy"}
            </button>
          </div>
        </div>
      ) : null}
      {/* A phone scrolls the table sideways within its own region rather than the whole page. */}
      <div class="table-scroll" tabIndex={0} role="region" aria-label="API keys">
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Token</th>
              <th scope="col">Scopes</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.map((k) => (
              <tr key={k.id} class={k.revoked_at ? "revoked" : ""}>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td class="small">{k.scopes.join(", ")}</td>
                <td>{k.last_used_at ? when(k.last_used_at) : "never"}</td>
                <td>{k.expires_at ? when(k.expires_at) : "never"}</td>
                <td>
                  {k.revoked_at ? (
                    <span class="muted">revoked</span>
                  ) : (
                    <button type="button" class="danger" onClick={() => setRevoking(k)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Confirm
        open={!!revoking}
        title={`Revoke "${revoking?.name ?? ""}"?`}
        confirmLabel="Revoke"
        onCancel={() => setRevoking(null)}
        onConfirm={() => revoking && void revoke(revoking)}
      >
        <p>Programs using this key get 401 from now on.</p>
      </Confirm>
    </section>
  );
}

function Profiles() {
  const { session, update } = useSession();
  const [error, setError] = useState<unknown>(null);
  const add = async (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.target as HTMLFormElement);
    try {
      const r = await api<{ data: SessionInfo }>("POST", "/auth/profiles", {
        name: String(data.get("name")),
        sandbox: data.get("sandbox") === "on",
      });
      update(r.data);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="panel" aria-labelledby="profiles-h">
      <h2 id="profiles-h">Profiles</h2>
      <ul>
        {session.profiles.map((p) => (
          <li key={p.id}>
            {p.name} {p.sandbox ? <span class="badge">sandbox</span> : null}
            {p.id === session.profile.id ? <span class="muted small"> (current)</span> : null}
          </li>
        ))}
      </ul>
      {/* An operator's grant (crier users set --can-create-profiles): without it the API refuses anyway. */}
      {session.user.can_create_profiles ? (
        <form class="inline-form" onSubmit={add}>
          <label for="profile-name">New profile</label>
          <input id="profile-name" name="name" required maxLength={100} />
          <label class="check">
            <input type="checkbox" name="sandbox" /> Sandbox (emulated platforms)
          </label>
          <button type="submit">Add profile</button>
        </form>
      ) : (
        <p class="muted small">New profiles are created by your administrator.</p>
      )}
      <ErrorNote error={error} />
    </section>
  );
}

function SignOutEverywhere() {
  const out = async () => {
    await api("POST", "/auth/sign-out", { everywhere: true });
    navigate("/sign-in", true);
    location.reload();
  };
  return (
    <section class="panel">
      <h2>Sessions</h2>
      <button type="button" onClick={() => void out()}>
        Sign out everywhere
      </button>
    </section>
  );
}
