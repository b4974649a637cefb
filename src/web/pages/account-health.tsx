/**
 * One account's health on the accounts page: when its credentials end (a stored fact, no call), and on
 * "Check now" what `crier accounts check` reports (GET /v1/accounts/{id}/check, which calls the platform,
 * so only when asked): whether the token works, what it can publish, the scopes it lacks, the problems.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import type { Account, AccountCheck } from "../types.ts";
import { ErrorNote, when } from "../ui.tsx";

const DAY = 86_400_000;
/** Credentials ending within this are worth a Reconnect before they do. */
export const EXPIRY_WARNING_MS = 7 * DAY;

/** "expires in 12 days", "expires in 5 hours", "expired 2 days ago". */
export function expiresIn(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now;
  const span = Math.abs(ms);
  const n = span >= DAY ? Math.round(span / DAY) : Math.max(1, Math.round(span / 3_600_000));
  const unit = span >= DAY ? (n === 1 ? "day" : "days") : n === 1 ? "hour" : "hours";
  return ms >= 0 ? `expires in ${n} ${unit}` : `expired ${n} ${unit} ago`;
}

/** What each kind of content needs of the token: publishing itself, and the scoped extras. */
const KINDS: { key: keyof NonNullable<Account["capabilities"]>; label: string; scope: string }[] = [
  { key: "text", label: "Text", scope: "publish" },
  { key: "images", label: "Images", scope: "publish" },
  { key: "video", label: "Video", scope: "publish" },
  { key: "threads", label: "Threads", scope: "publish" },
  { key: "first_comment", label: "First comment", scope: "first_comment" },
  { key: "source", label: "Workflow source", scope: "workflow_source" },
];

const TOKEN_WORDS: Record<AccountCheck["token"], string> = {
  valid: "works",
  refreshed: "works (it was refreshed just now)",
  refused: "refused by the platform",
  unreachable: "not checked: the platform did not answer",
  not_checked: "not checked: the platform offers no way to",
};

/** Whether the account needs connecting again, from what is known without asking the platform. */
export function needsReconnect(a: Account, check?: AccountCheck | null, now = Date.now()): boolean {
  if (a.status !== "active") return a.status === "auth_required";
  if (check && (check.token === "refused" || check.scopes.missing.publish)) return true;
  return !!a.credentials_expire_at && Date.parse(a.credentials_expire_at) - now < EXPIRY_WARNING_MS;
}

export function AccountHealth({
  account,
  check,
  onCheck,
}: {
  account: Account;
  check: AccountCheck | null;
  onCheck: (c: AccountCheck) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      onCheck((await api<{ data: AccountCheck }>("GET", `/v1/accounts/${account.id}/check`)).data);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const expires = account.credentials_expire_at;
  const soon = expires && Date.parse(expires) - Date.now() < EXPIRY_WARNING_MS;
  const kinds = KINDS.filter((k) => account.capabilities?.[k.key]);
  return (
    <div class="health">
      <p class={`small expiry${soon ? " soon" : ""}`}>
        {expires ? (
          <>
            Access {expiresIn(expires)} ({when(expires)}){soon ? <strong> — reconnect before then</strong> : null}
          </>
        ) : (
          "Access has no known end."
        )}
      </p>
      <ul class="chips" aria-label="Can publish">
        {kinds.map((k) => {
          const missing = check?.scopes.missing[k.scope];
          const blocked = !!missing || (check ? !check.can_publish && k.scope === "publish" : false);
          return (
            <li key={k.key} class={blocked ? "blocked" : ""}>
              {k.label}
              {check ? (blocked ? ": no" : ": yes") : ""}
            </li>
          );
        })}
      </ul>
      {account.status !== "disconnected" ? (
        <button type="button" class="small-button" onClick={() => void run()} disabled={busy}>
          {busy ? "Checking…" : "Check now"}
          <span class="visually-hidden"> {account.username}</span>
        </button>
      ) : null}
      <ErrorNote error={error} />
      {check ? (
        <div class="check-result" role="status" aria-label={`Check of ${account.username}`}>
          <p class="small">
            Checked {when(check.checked_at)}: the token {TOKEN_WORDS[check.token]}
            {check.expires_at ? `; the access token ${expiresIn(check.expires_at)}` : ""}.{" "}
            <strong>{check.can_publish ? "It can publish." : "It cannot publish."}</strong>
          </p>
          {Object.entries(check.scopes.missing).length ? (
            <ul class="small" aria-label="Scopes missing">
              {Object.entries(check.scopes.missing).map(([cap, scopes]) => (
                <li key={cap}>
                  {cap.replace(/_/g, " ")} is missing the scope(s) <code>{scopes.join(", ")}</code>
                </li>
              ))}
            </ul>
          ) : check.scopes.granted ? (
            <p class="small">No scopes missing.</p>
          ) : null}
          {check.problems.length ? (
            <ul class="problems" aria-label="Problems">
              {check.problems.map((p) => (
                <li key={p} class="problem">
                  {p}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
