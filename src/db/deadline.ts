/**
 * Client-side deadlines for PostgreSQL statements. A server that accepts connections but never answers
 * (hung, or a route dropping packets) gives no error at all: without a deadline a query waits for as long
 * as TCP takes to notice, minutes. statement_timeout bounds only what a server that answers does.
 *
 * A deadline is scoped, not global: code that runs inside `withQueryDeadline(ms, fn)` (an API request,
 * the engine's result writer) has each of its statements bounded by `ms`; the rest of the engine runs
 * without one (statement_timeout alone), because a claim abandoned on the client could still commit on
 * the server and leave targets claimed by a copy that never learns of them (src/engine/claim.ts).
 *
 * When a deadline passes, the statement is first cancelled on the server (a CancelRequest on a connection
 * of its own). A server that answers the cancel ends the statement the ordinary way, and its outcome is
 * known: cancelled (SQLSTATE 57014, nothing applied) or done just in time. Only when the cancel is not
 * answered either does the statement fail with DatabaseTimeout, whose outcome is unknown: it may still
 * reach the server and commit later.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** How long a cancelled statement may take to say how it ended before it is given up as unanswered. */
export const CANCEL_GRACE_MS = 250;

/** The statement (or the COMMIT of its transaction) got no answer in time; see `mayHaveApplied`. */
export class DatabaseTimeout extends Error {
  readonly code = "CRIER_DB_TIMEOUT";
  constructor(
    ms: number,
    /** False when the statement is known never to have run (it waited for a connection, then was dropped). */
    readonly mayHaveApplied: boolean,
  ) {
    super(`the database did not answer within ${ms} ms`);
  }
}

const scope = new AsyncLocalStorage<{ ms: number | null }>();

/**
 * Runs `fn` with each PostgreSQL statement it sends bounded by `ms` (null: no client-side bound). What
 * `fn` returns is awaited inside the scope: drizzle's queries are lazy and send nothing until awaited.
 */
export function withQueryDeadline<T>(ms: number | null, fn: () => T | PromiseLike<T>): Promise<T> {
  return scope.run({ ms }, async () => await fn());
}

/** The bound of the statements sent from here, or null. */
export function queryDeadlineMs(): number | null {
  return scope.getStore()?.ms ?? null;
}
