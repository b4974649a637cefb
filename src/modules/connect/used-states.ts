/**
 * A connect state is single-use: the first callback (or hosted form) that presents it spends it, and any
 * later one is refused, on this copy or any other sharing the database. The signed state itself stays
 * stateless; only its nonce is recorded, and only until the state would have expired anyway.
 */
import { eq, lt } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { connectStatesUsed } from "../../db/schema.ts";
import type { ConnectState } from "./state.ts";

/** Records the state as used; false when it already was. */
export async function spendState(db: Db, state: ConnectState, now: Date): Promise<boolean> {
  // Forgetting expired nonces here keeps the table as small as the number of flows in their five minutes.
  await db.db.delete(connectStatesUsed).where(lt(connectStatesUsed.expiresAt, now));
  const inserted = await db.db
    .insert(connectStatesUsed)
    .values({ nonce: state.nonce, expiresAt: new Date(state.expiresAt) })
    .onConflictDoNothing()
    .returning({ nonce: connectStatesUsed.nonce });
  return inserted.length === 1;
}

/** Whether the state was already used: a hosted page opened again after it connected says so at once. */
export async function stateSpent(db: Db, state: ConnectState): Promise<boolean> {
  const rows = await db.db
    .select({ nonce: connectStatesUsed.nonce })
    .from(connectStatesUsed)
    .where(eq(connectStatesUsed.nonce, state.nonce));
  return rows.length > 0;
}
