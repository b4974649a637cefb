/**
 * Whether the database answers, as this copy last saw it: a circuit that opens on the first connection
 * failure (so requests fail fast with 503 instead of queueing behind reconnects) and closes by itself once
 * a probe on a fresh connection succeeds again.
 */

/** Errors that mean "the database could not be reached", not "this query was wrong". */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EPIPE",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  // SQLSTATE: admin_shutdown, crash_shutdown, cannot_connect_now (starting up or shutting down).
  "57P01",
  "57P02",
  "57P03",
]);

/** The error codes of `error` and of what it wraps (drizzle wraps driver errors in `cause`). */
function* errorCodes(error: unknown): Generator<string> {
  for (
    let e = error, depth = 0;
    e && typeof e === "object" && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") yield code;
  }
}

/** True when `error` says the database is unreachable. */
export function isConnectionError(error: unknown): boolean {
  for (const code of errorCodes(error)) if (CONNECTION_CODES.has(code) || code.startsWith("08")) return true;
  return false;
}

/**
 * True when the database refused a write because its disk is full: SQLSTATE 53100 disk_full, which both
 * PostgreSQL and the embedded PGlite raise when a data file cannot grow. Nothing was written, reads still
 * work, and the same write succeeds once space is freed, without a restart.
 */
export function isStorageFullError(error: unknown): boolean {
  for (const code of errorCodes(error)) if (code === "53100") return true;
  return false;
}

/**
 * Errors that mean "the database did not answer in time": a client-side deadline passed (db/deadline.ts),
 * the statement was cancelled (57014: statement_timeout, or the cancel sent at a deadline), or a lock was
 * not granted in time (55P03). The database may be reachable and merely busy; a probe tells which.
 */
const TIMEOUT_CODES = new Set(["CRIER_DB_TIMEOUT", "57014", "55P03"]);

export function isTimeoutError(error: unknown): boolean {
  for (const code of errorCodes(error)) if (TIMEOUT_CODES.has(code)) return true;
  return false;
}

/**
 * Whether a statement that timed out may nonetheless have been applied: one whose cancel was not answered
 * either (DatabaseTimeout with mayHaveApplied). A cancelled statement (57014) or one that never left the
 * queue applied nothing.
 */
export function mayHaveApplied(error: unknown): boolean {
  for (
    let e = error, depth = 0;
    e && typeof e === "object" && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if ((e as { code?: unknown }).code === "CRIER_DB_TIMEOUT")
      return (e as { mayHaveApplied?: boolean }).mayHaveApplied === true;
  }
  return false;
}

/**
 * True when the same statement may well succeed if sent again: the database was unreachable, did not
 * answer in time or had a full disk, or it chose this transaction as the victim of a deadlock or a serialization conflict
 * (SQLSTATE class 40). A write sent again must be one whose repeat is harmless (fenced or idempotent):
 * after a timeout the first may have been applied too.
 */
export function isTransientError(error: unknown): boolean {
  if (isConnectionError(error) || isTimeoutError(error) || isStorageFullError(error)) return true;
  for (const code of errorCodes(error)) if (code.startsWith("40")) return true;
  return false;
}

export interface AvailabilityOptions {
  /** One round trip on a fresh connection; rejects when the database does not answer. */
  probe(): Promise<void>;
  /** Between probes while the circuit is open. */
  probeEveryMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export class DatabaseAvailability {
  private downSince: number | null = null;
  private probing = false;
  private checking = false;

  constructor(private readonly o: AvailabilityOptions) {}

  /** Where the circuit's openings and closings are logged (the server sets its logger once it has one). */
  logTo(log: AvailabilityOptions["log"]): void {
    this.o.log = log;
  }

  /** The circuit is open: the last contact failed and no probe has succeeded since. */
  get down(): boolean {
    return this.downSince !== null;
  }

  /** Reports a failed query; a connection failure opens the circuit and starts probing. */
  report(error: unknown): void {
    if (!isConnectionError(error) || this.down) return;
    this.downSince = Date.now();
    this.o.log?.("database unreachable: answering 503 until it is back", {
      error: (error as Error)?.message,
    });
    void this.probeUntilUp();
  }

  /**
   * Reports a statement that got no answer in time: the server may be hung or merely busy (a lock held
   * elsewhere). One probe on a fresh connection tells; the circuit opens only if it fails.
   */
  suspect(): void {
    if (this.down || this.checking) return;
    this.checking = true;
    void this.o
      .probe()
      .catch((e) => {
        this.checking = false;
        this.report(Object.assign(new Error(`probe failed: ${(e as Error)?.message}`), { code: "ETIMEDOUT" }));
      })
      .finally(() => {
        this.checking = false;
      });
  }

  private async probeUntilUp(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      while (this.down) {
        await Bun.sleep(this.o.probeEveryMs ?? 500);
        try {
          await this.o.probe();
          this.o.log?.("database reachable again", { down_ms: Date.now() - (this.downSince ?? Date.now()) });
          this.downSince = null;
        } catch {
          /* still down */
        }
      }
    } finally {
      this.probing = false;
    }
  }
}
