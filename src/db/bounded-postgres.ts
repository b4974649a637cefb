/**
 * The postgres.js client as drizzle sees it, with the scoped client-side deadline of deadline.ts applied
 * to each statement (`unsafe`, which drizzle sends every query through) and to each transaction
 * (`begin`: the wait for a connection and the COMMIT, which no statement deadline covers).
 */
import type { Sql } from "postgres";
import { CANCEL_GRACE_MS, DatabaseTimeout, queryDeadlineMs } from "./deadline.ts";

/** The part of a postgres.js PendingQuery used here: it runs when first awaited. */
interface PendingQuery<T> extends PromiseLike<T> {
  values(): PendingQuery<T>;
  /** Internal to postgres.js: its cancel() drops the promise this returns, whose rejection would go unhandled. */
  canceller?: ((q: unknown) => Promise<void>) | null;
}

/** Asks the server to cancel `q` (or drops it from the queue when it has not been sent yet). */
function cancel(q: PendingQuery<unknown>): void {
  const canceller = q.canceller;
  q.canceller = null;
  // A server that does not answer the statement does not answer the cancel either; that is not an error.
  canceller?.(q).catch(() => {});
}

/** `q`'s own outcome if it comes within `ms` (or within the grace after a cancel), else DatabaseTimeout. */
function bounded<T>(q: PendingQuery<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => {
      cancel(q);
      grace = setTimeout(() => {
        if (settled) return;
        settled = true;
        reject(new DatabaseTimeout(ms, true));
      }, CANCEL_GRACE_MS);
    }, ms);
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(grace);
      const first = !settled;
      settled = true;
      return first;
    };
    q.then(
      (v) => finish() && resolve(v),
      (e) => finish() && reject(e),
    );
  });
}

function boundedQuery<T>(q: PendingQuery<T>): unknown {
  const ms = queryDeadlineMs();
  if (ms === null) return q;
  // drizzle either awaits the query or calls values() and awaits that.
  return {
    values: () => bounded(q.values(), ms),
    then: (ok, fail) => bounded(q, ms).then(ok, fail),
  } satisfies PromiseLike<T> & { values(): Promise<T> };
}

/**
 * A transaction under a deadline. Each statement in it is bounded as usual; on top, if no connection was
 * free by the deadline the transaction is given up (and, should a connection come later, rolled back
 * before running anything), and a COMMIT or ROLLBACK unanswered for as long is given up too: a COMMIT
 * may have applied; after a failed body the failure stands, as its ROLLBACK cannot have committed anything.
 */
function boundedBegin(client: Sql, args: unknown[]): Promise<unknown> {
  const ms = queryDeadlineMs();
  const body = args[args.length - 1] as (tx: Sql) => unknown;
  const options = args.length > 1 ? [args[0]] : [];
  let givenUp = false;
  let started = false;
  /** Called once the body has ended: COMMIT (or, with the body's error, ROLLBACK) is on its way. */
  let ending: (failed?: { error: unknown }) => void = () => {};
  const begin = (client.begin as (...a: unknown[]) => Promise<unknown>)(...options, (tx: Sql) => {
    if (givenUp) throw new DatabaseTimeout(ms ?? 0, false);
    started = true;
    const run = Promise.resolve(body(wrapClient(tx)));
    run.then(
      () => ending(),
      (error: unknown) => ending({ error }),
    );
    return run;
  });
  if (ms === null) return begin;
  return new Promise((resolve, reject) => {
    let timer = setTimeout(() => {
      if (started) return;
      givenUp = true;
      reject(new DatabaseTimeout(ms, false));
    }, ms + CANCEL_GRACE_MS);
    ending = (failed) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        givenUp = true;
        // An unanswered ROLLBACK changes nothing about the body's own failure: nothing was committed.
        reject(failed ? failed.error : new DatabaseTimeout(ms, true));
      }, ms + CANCEL_GRACE_MS);
    };
    begin.then(
      (v) => {
        clearTimeout(timer);
        if (!givenUp) resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        if (!givenUp) reject(e);
      },
    );
  });
}

/** `client` with every statement and transaction under the scoped deadline (savepoints run inside one). */
export function wrapClient(client: Sql): Sql {
  return new Proxy(client, {
    get(target, prop) {
      if (prop === "unsafe")
        return (...a: Parameters<Sql["unsafe"]>) =>
          boundedQuery(target.unsafe(...a) as unknown as PendingQuery<unknown>);
      if (prop === "begin") return (...a: unknown[]) => boundedBegin(target, a);
      if (prop === "savepoint")
        return (...a: unknown[]) => {
          const body = a[a.length - 1] as (tx: Sql) => unknown;
          return (target as unknown as { savepoint: (...x: unknown[]) => unknown }).savepoint(
            ...a.slice(0, -1),
            (tx: Sql) => body(wrapClient(tx)),
          );
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
