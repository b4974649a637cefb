import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { SessionInfo } from "./types.ts";

export interface SessionState {
  session: SessionInfo;
  /** Replaces the session (after a profile switch); pages reload their data on the new profile. */
  update(next: SessionInfo): void;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside a signed-in page");
  return s;
}
