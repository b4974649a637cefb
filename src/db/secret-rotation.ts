/**
 * Moving stored secrets (accounts' credentials, webhook endpoints' signing secrets) from the key SECRET_KEY
 * replaced to SECRET_KEY itself: `crier secrets rotate`, and the check a server makes at start.
 *
 * A stored text names its key (crypto.ts), so what is not yet under SECRET_KEY is found in SQL. Each batch
 * is one transaction that locks its rows with FOR UPDATE SKIP LOCKED: two runs (or two copies) at once
 * never take the same row, and a row another run committed no longer matches, so each row is re-encrypted
 * exactly once. A run that stops halfway leaves every row under one key or the other: running it again
 * goes on from there.
 */
import { and, eq, isNotNull, sql, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { secretKeys, type Config } from "../config.ts";
import type { Db, Queryable } from "./client.ts";
import { encryptJson, keyId, openJson, storedPrefix, UnknownSecretKey } from "./crypto.ts";
import { accounts, webhookEndpoints } from "./schema.ts";

type Keys = Pick<Config, "secretKey" | "secretKeyPrevious">;

/** Where secrets are stored encrypted, and the name a report gives their rows. */
const STORES: { kind: StoredSecret["kind"]; table: PgTable; id: PgColumn; stored: PgColumn }[] = [
  { kind: "account", table: accounts, id: accounts.id, stored: accounts.credentials },
  { kind: "webhook", table: webhookEndpoints, id: webhookEndpoints.id, stored: webhookEndpoints.secrets },
];

export interface StoredSecret {
  kind: "account" | "webhook";
  id: string;
}

export interface SecretsReport {
  /** The id of SECRET_KEY (crypto.ts keyId), for the CLI to check it rotates to the key it was given. */
  key_id: string;
  previous_key_id: string | null;
  /** Encrypted values stored in all. */
  total: number;
  /** Of those, the ones not yet under SECRET_KEY that a key of this server opens. */
  to_rotate: number;
  /** Values no key of this server opens: a rotation refuses to start while there are any. */
  unreadable: StoredSecret[];
}

const notUnder = (column: PgColumn, prefix: string): SQL =>
  and(isNotNull(column), sql`left(${column}, ${prefix.length}) <> ${prefix}`)!;

/** Whether the stored text opens: a key id names its key, an older text without one is tried with each. */
function opens(keys: Keys, stored: string): boolean {
  try {
    openJson(secretKeys(keys), stored);
    return true;
  } catch {
    return false;
  }
}

/** What is stored under which key: read only, nothing changes. */
export async function secretsReport(db: Db, keys: Keys): Promise<SecretsReport> {
  const prefix = storedPrefix(keys.secretKey);
  let total = 0;
  let toRotate = 0;
  const unreadable: StoredSecret[] = [];
  for (const s of STORES) {
    const [{ n }] = await db.db
      .select({ n: sql<number>`count(*)::int` })
      .from(s.table)
      .where(isNotNull(s.stored));
    total += n;
    const rows = (await db.db
      .select({ id: s.id, stored: s.stored })
      .from(s.table)
      .where(notUnder(s.stored, prefix))) as { id: string; stored: string }[];
    for (const r of rows) {
      if (opens(keys, r.stored)) toRotate++;
      else unreadable.push({ kind: s.kind, id: r.id });
    }
  }
  return {
    key_id: keyId(keys.secretKey),
    previous_key_id: keys.secretKeyPrevious ? keyId(keys.secretKeyPrevious) : null,
    total,
    to_rotate: toRotate,
    unreadable,
  };
}

/** Raised by a batch that met a value no key opens; the batch changed nothing. */
export class UnreadableSecrets extends Error {
  constructor(readonly rows: StoredSecret[]) {
    super(
      `${describeUnreadable(rows)} can be opened by neither SECRET_KEY nor SECRET_KEY_PREVIOUS; nothing was changed. ` +
        "Set SECRET_KEY_PREVIOUS to the key they were encrypted with and run the rotation again.",
    );
  }
}

export function describeUnreadable(rows: StoredSecret[]): string {
  const of = (kind: StoredSecret["kind"]) => rows.filter((r) => r.kind === kind).map((r) => r.id);
  const parts = [];
  if (of("account").length) parts.push(`account(s) ${of("account").join(", ")}`);
  if (of("webhook").length) parts.push(`webhook endpoint(s) ${of("webhook").join(", ")}`);
  return `the stored secrets of ${parts.join(" and ")}`;
}

/**
 * Re-encrypts up to `limit` stored values that are not under SECRET_KEY, in one transaction; the number
 * re-encrypted. 0 while rows remain means another run holds them (they are skipped, not waited for).
 * Throws UnreadableSecrets, changing nothing, when a locked row opens with no key of this server.
 */
export async function rotateBatch(db: Db, keys: Keys, limit: number): Promise<{ rotated: number }> {
  const prefix = storedPrefix(keys.secretKey);
  return db.db.transaction(async (tx) => {
    let rotated = 0;
    const unreadable: StoredSecret[] = [];
    for (const s of STORES) {
      if (rotated + unreadable.length >= limit) break;
      const rows = (await tx
        .select({ id: s.id, stored: s.stored })
        .from(s.table)
        .where(notUnder(s.stored, prefix))
        .limit(limit - rotated - unreadable.length)
        .for("update", { skipLocked: true })) as { id: string; stored: string }[];
      for (const r of rows) {
        let value: unknown;
        try {
          value = openJson(secretKeys(keys), r.stored).value;
        } catch (e) {
          if (!(e instanceof UnknownSecretKey)) throw e;
          unreadable.push({ kind: s.kind, id: r.id });
          continue;
        }
        // Only the ciphertext changes: updated_at stays (it is the resource's, and a client's precondition).
        await store(tx, s, r.id, encryptJson(keys.secretKey, value));
        rotated++;
      }
    }
    if (unreadable.length) throw new UnreadableSecrets(unreadable);
    return { rotated };
  });
}

async function store(tx: Queryable, s: (typeof STORES)[number], id: string, text: string) {
  await tx
    .update(s.table)
    .set({ [s.kind === "account" ? "credentials" : "secrets"]: text })
    .where(eq(s.id, id));
}

export interface StartupNote {
  level: "warn" | "info";
  message: string;
  fields?: Record<string, unknown>;
}

/**
 * What a server says at start about its keys: a warning naming the fix when stored secrets open with none
 * of them (SECRET_KEY changed without SECRET_KEY_PREVIOUS), and with SECRET_KEY_PREVIOUS set, whether a
 * rotation is still to run.
 */
export async function secretKeyNotes(db: Db, keys: Keys): Promise<StartupNote[]> {
  const report = await secretsReport(db, keys);
  const notes: StartupNote[] = [];
  if (keys.secretKeyPrevious)
    notes.push({
      level: "info",
      message: report.to_rotate
        ? `${report.to_rotate} stored secret(s) are still under SECRET_KEY_PREVIOUS: run \`crier secrets rotate\``
        : "nothing stored is under SECRET_KEY_PREVIOUS any more: remove it once links signed with it have expired",
    });
  if (report.unreadable.length === 0) return notes;
  const shown = report.unreadable.slice(0, 20);
  notes.push({
    level: "warn",
    message:
      `${report.unreadable.length} stored secret(s) cannot be opened with SECRET_KEY${keys.secretKeyPrevious ? " or SECRET_KEY_PREVIOUS" : ""}: ` +
      "publishing from those accounts and delivering to those webhooks will fail. " +
      "If SECRET_KEY was changed, set SECRET_KEY_PREVIOUS to the old key, restart, then run `crier secrets rotate`.",
    fields: {
      accounts: shown.filter((r) => r.kind === "account").map((r) => r.id),
      webhooks: shown.filter((r) => r.kind === "webhook").map((r) => r.id),
    },
  });
  return notes;
}
