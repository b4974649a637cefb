import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { AtRiskBanner, AtRiskContext, useAtRiskAccounts } from "./account-alerts.tsx";
import { api, ApiFailure, useSessionToken, whenSignedOut } from "./api.ts";
import { Link, match, navigate, usePath } from "./router.tsx";
import { SessionContext } from "./session.ts";
import type { SessionInfo } from "./types.ts";
import { ErrorNote } from "./ui.tsx";
import { AccountsPage } from "./pages/accounts.tsx";
import { AnalyticsPage } from "./pages/analytics.tsx";
import { CalendarPage } from "./pages/calendar.tsx";
import { ComposePage } from "./pages/compose.tsx";
import { DraftsPage } from "./pages/drafts.tsx";
import { ImportPage } from "./pages/import.tsx";
import { MediaPage } from "./pages/media.tsx";
import { PostDetailPage } from "./pages/post-detail.tsx";
import { PostsPage } from "./pages/posts.tsx";
import { PreferencesPage } from "./pages/preferences.tsx";
import { WebhooksPage } from "./pages/webhooks.tsx";
import { WorkflowPage } from "./pages/workflow-detail.tsx";
import { WorkflowsPage } from "./pages/workflows.tsx";
import { SignInPage, WelcomePage } from "./pages/sign-in.tsx";

type Page = ComponentType<{ params: Record<string, string> }>;

/**
 * The navigation, in order. Workflows, Analytics and Webhooks join here (one entry and one route each)
 * once their pages exist.
 */
const NAV: { href: string; label: string }[] = [
  { href: "/compose", label: "Compose" },
  { href: "/calendar", label: "Calendar" },
  { href: "/posts", label: "Posts" },
  { href: "/analytics", label: "Analytics" },
  { href: "/drafts", label: "Drafts" },
  { href: "/media", label: "Media" },
  { href: "/import", label: "Import" },
  { href: "/workflows", label: "Workflows" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/accounts", label: "Accounts" },
  { href: "/preferences", label: "Preferences" },
];

const ROUTES: [string, Page][] = [
  ["/compose", ComposePage],
  ["/calendar", CalendarPage],
  ["/posts", PostsPage],
  ["/posts/:id", PostDetailPage],
  ["/analytics", AnalyticsPage],
  ["/drafts", DraftsPage],
  ["/drafts/:id", ComposePage],
  ["/media", MediaPage],
  ["/import", ImportPage],
  ["/workflows", WorkflowsPage],
  ["/workflows/:id", WorkflowPage],
  ["/webhooks", WebhooksPage],
  ["/accounts", AccountsPage],
  ["/preferences", PreferencesPage],
];

export function App() {
  const path = usePath();
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);

  const adopt = (s: SessionInfo) => {
    useSessionToken(s.csrf_token);
    setSession(s);
  };

  useEffect(() => {
    whenSignedOut(() => {
      setSession(null);
      navigate("/sign-in", true);
    });
    api<{ data: SessionInfo }>("GET", "/auth/session").then(
      (r) => adopt(r.data),
      (e) => (e instanceof ApiFailure && e.status === 401 ? setSession(null) : setError(e)),
    );
  }, []);

  if (path === "/welcome") return <WelcomePage onSignedIn={adopt} />;
  if (error) return <ErrorNote error={error} />;
  if (session === undefined) return <p class="boot">Loading…</p>;
  if (session === null || path === "/sign-in") {
    if (session && path === "/sign-in") navigate("/compose", true);
    return <SignInPage onSignedIn={adopt} />;
  }
  if (path === "/") {
    navigate("/compose", true);
    return null;
  }
  let page: { Page: Page; params: Record<string, string> } | null = null;
  for (const [pattern, Page] of ROUTES) {
    const params = match(pattern, path);
    if (params) {
      page = { Page, params };
      break;
    }
  }
  return (
    <SessionContext.Provider value={{ session, update: adopt }}>
      <Shell session={session} path={path} onSession={adopt} onSignOut={() => setSession(null)}>
        {page ? (
          // Keyed by profile: switching profiles remounts the page, which loads that profile's data.
          <page.Page key={`${session.profile.id}:${path}`} params={page.params} />
        ) : (
          <p>This page does not exist.</p>
        )}
      </Shell>
    </SessionContext.Provider>
  );
}

function Shell(props: {
  session: SessionInfo;
  path: string;
  onSession: (s: SessionInfo) => void;
  onSignOut: () => void;
  children: preact.ComponentChildren;
}) {
  const { session } = props;
  const [menuOpen, setMenuOpen] = useState(false);
  const atRisk = useAtRiskAccounts(session.profile.id);
  const switchTo = async (profileId: string) => {
    const r = await api<{ data: SessionInfo }>("POST", "/auth/profile", { profile_id: profileId });
    props.onSession(r.data);
  };
  const signOut = async () => {
    await api("POST", "/auth/sign-out", {});
    props.onSignOut();
    navigate("/sign-in", true);
  };
  const sandbox = session.profile.sandbox;
  return (
    <div class={`layout${sandbox ? " in-sandbox" : ""}`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      {sandbox ? (
        // A plain link: /sandbox is the server's own page, which signs in with a key's one-time link.
        <div class="sandbox-bar" role="region" aria-label="Sandbox">
          <strong>Sandbox</strong>
          <span>Posts go to Crier's emulators, never to real platforms.</span>
          <a href="/sandbox">Open the sandbox inbox</a>
        </div>
      ) : null}
      <header class="topbar">
        <Link href="/compose" class="brand">
          Crier
        </Link>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="nav" class={menuOpen ? "open" : ""} aria-label="Main">
          {NAV.map((n) => (
            <Link
              key={n.href}
              href={n.href}
              aria-current={props.path.startsWith(n.href) ? "page" : undefined}
              onClick={() => setMenuOpen(false)}
            >
              {n.label}
            </Link>
          ))}
        </nav>
        <div class="who">
          <label class="profile-switch">
            <span class="visually-hidden">Profile</span>
            <select value={session.profile.id} onChange={(e) => void switchTo((e.target as HTMLSelectElement).value)}>
              {session.profiles.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                  {p.sandbox ? " (sandbox)" : ""}
                </option>
              ))}
            </select>
          </label>
          <button type="button" class="link" onClick={() => void signOut()} title={session.user.email}>
            Sign out
          </button>
        </div>
      </header>
      <AtRiskBanner accounts={atRisk} />
      <AtRiskContext.Provider value={atRisk}>
        <main id="main">{props.children}</main>
      </AtRiskContext.Provider>
    </div>
  );
}
