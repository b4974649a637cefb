import { createHash } from "node:crypto";
import { newRowId } from "../db/ids.ts";
import { and, eq } from "drizzle-orm";
import { t } from "elysia";
import type { Database, Tx } from "../db/client.ts";
import { idempotencyKeys } from "../db/schema.ts";
import { Conflict } from "./errors.ts";

export const IdempotencyHeader = t.Object({
  "idempotency-key": t.Optional(
    t.String({
      minLength: 1,
      maxLength: 200,
      description:
        "Reusing a key with the same body returns the original record; with a different body, 409 idempotency_conflict. Keys are per profile.",
    }),
  ),
});

/**
 * The answer of a create that takes an Idempotency-Key: 201 with the record, and a replay answers exactly
 * like the original and says so in the Idempotent-Replayed header.
 */
export function created<T>(
  set: { status?: number | string; headers: Record<string, unknown> },
  result: { value: T; replayed: boolean },
): { data: T } {
  set.status = 201;
  if (result.replayed) set.headers["idempotent-replayed"] = "true";
  return { data: result.value };
}

/** Canonical JSON (keys sorted) so the same body in another key order hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export const requestHash = (body: unknown) => createHash("sha256").update(canonical(body)).digest("hex");

/**
 * Creates a resource at most once per (profile, operation, key). The key row and the resource are
 * written in one transaction; a concurrent request with the same key waits on the key's unique index
 * and then finds the first one's record.
 */
export async function idempotent<T>(
  db: Database,
  opts: { profileId: string; operation: string; key?: string; body: unknown },
  create: (tx: Tx, id: string) => Promise<T>,
  load: (id: string) => Promise<T>,
): Promise<{ value: T; replayed: boolean }> {
  if (!opts.key) return { value: await db.transaction((tx) => create(tx, newRowId())), replayed: false };
  const hash = requestHash(opts.body);
  const outcome = await db.transaction(async (tx) => {
    const id = newRowId();
    const inserted = await tx
      .insert(idempotencyKeys)
      .values({
        profileId: opts.profileId,
        operation: opts.operation,
        key: opts.key!,
        requestHash: hash,
        resourceId: id,
      })
      .onConflictDoNothing()
      .returning({ id: idempotencyKeys.resourceId });
    if (inserted.length) return { created: await create(tx, id) };
    const [existing] = await tx
      .select()
      .from(idempotencyKeys)
      .where(
        and(
          eq(idempotencyKeys.profileId, opts.profileId),
          eq(idempotencyKeys.operation, opts.operation),
          eq(idempotencyKeys.key, opts.key!),
        ),
      );
    if (existing.requestHash !== hash) {
      throw new Conflict(
        "idempotency_conflict",
        "This Idempotency-Key was already used with a different request body.",
        "Use a new Idempotency-Key for a different request, or resend the original body.",
      );
    }
    return { existingId: existing.resourceId };
  });
  if ("created" in outcome) return { value: outcome.created as T, replayed: false };
  return { value: await load(outcome.existingId!), replayed: true };
}
