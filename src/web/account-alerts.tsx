/**
 * The banner every page shows when an account with scheduled posts will not publish them unless it is
 * connected again. GET /v1/accounts/at-risk is a database read; the shell asks it once per page load
 * and per profile, and shares the answer (the accounts page marks those accounts for Reconnect).
 */
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { api } from "./api.ts";
import { Link } from "./router.tsx";
import type { AccountAtRisk } from "./types.ts";
import { when } from "./ui.tsx";

export const AtRiskContext = createContext<AccountAtRisk[]>([]);
export const useAtRisk = () => useContext(AtRiskContext);

/** The at-risk accounts of a profile, asked once per profile (a failure just shows no banner). */
export function useAtRiskAccounts(profileId: string): AccountAtRisk[] {
  const [list, setList] = useState<AccountAtRisk[]>([]);
  useEffect(() => {
    let live = true;
    setList([]);
    api<{ data: AccountAtRisk[] }>("GET", "/v1/accounts/at-risk").then(
      (r) => live && setList(r.data),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [profileId]);
  return list;
}

function reasonText(a: AccountAtRisk): string {
  if (a.reason === "expires_before_due")
    return `its access ends ${when(a.credentials_expire_at)}, before its first scheduled post (${when(a.first_scheduled_at)})`;
  const state = a.reason === "auth_required" ? "needs to be connected again" : "is disconnected";
  return `it ${state}, and its first scheduled post is due ${when(a.first_scheduled_at)}`;
}

export function AtRiskBanner({ accounts }: { accounts: AccountAtRisk[] }) {
  if (!accounts.length) return null;
  return (
    <section class="at-risk" aria-labelledby="at-risk-title">
      <h2 id="at-risk-title">
        {accounts.length === 1 ? "An account" : `${accounts.length} accounts`} will miss scheduled posts
      </h2>
      <ul>
        {accounts.map((a) => (
          <li key={a.account_id}>
            <strong>
              {a.username} ({a.platform})
            </strong>
            : {a.scheduled_posts} scheduled {a.scheduled_posts === 1 ? "post" : "posts"} will not publish:{" "}
            {reasonText(a)}.{" "}
            <Link href="/accounts">
              Reconnect<span class="visually-hidden"> {a.username}</span>
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
