import { useEffect, useState } from "preact/hooks";
import { api } from "../api.ts";
import { navigate } from "../router.tsx";
import type { SessionInfo } from "../types.ts";
import { ErrorNote } from "../ui.tsx";

type OnSignedIn = { onSignedIn: (s: SessionInfo) => void };

export function SignInPage({ onSignedIn }: OnSignedIn) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ data: SessionInfo }>("POST", "/auth/sign-in", {
        email: String(form.get("email")),
        password: String(form.get("password")),
      });
      onSignedIn(r.data);
      navigate(location.pathname === "/sign-in" || location.pathname === "/" ? "/compose" : location.pathname, true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth-card" id="main">
      <h1>Sign in to Crier</h1>
      <form onSubmit={submit}>
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p class="muted">No password yet? Use the one-time link from your administrator (crier users create).</p>
    </main>
  );
}

/**
 * The one-time link's page: the token is in the fragment, which the browser never sends, and the page
 * sends it only in request bodies, so it never reaches a request path (nor a server's or proxy's log).
 */
export function WelcomePage({ onSignedIn }: OnSignedIn) {
  const token = location.hash.slice(1);
  const [info, setInfo] = useState<{ email: string; expires_at: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<{ data: { email: string; expires_at: string } }>("POST", "/auth/links/lookup", { token }).then(
      (r) => setInfo(r.data),
      setError,
    );
  }, [token]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    if (form.get("password") !== form.get("confirm")) {
      setError(new Error("The two passwords differ."));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ data: SessionInfo }>("POST", "/auth/links/redeem", {
        token,
        password: String(form.get("password")),
      });
      onSignedIn(r.data);
      navigate("/accounts", true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth-card" id="main">
      <h1>Welcome to Crier</h1>
      {info ? (
        <form onSubmit={submit}>
          <p>
            Choose a password for <strong>{info.email}</strong>.
          </p>
          <input type="email" name="username" value={info.email} autocomplete="username" hidden readOnly />
          <label for="password">New password</label>
          <input id="password" name="password" type="password" autocomplete="new-password" minLength={10} required />
          <small class="muted">At least 10 characters.</small>
          <label for="confirm">Repeat it</label>
          <input id="confirm" name="confirm" type="password" autocomplete="new-password" required />
          <ErrorNote error={error} />
          <button type="submit" class="primary" disabled={busy}>
            Set password and sign in
          </button>
        </form>
      ) : (
        <ErrorNote error={error} />
      )}
    </main>
  );
}
