/**
 * Taking and freeing queue slots, for the posts module: a post created with queue: true gives each of its
 * accounts the account's next free slot, in the transaction that creates the post (claimSlots says how
 * posts queued at once on any copy take different slots without waiting for each other). The primary key
 * of queue_slots is what guarantees that no slot is ever given twice.
 */
import { and, eq, gte, inArray, sql } from "drizzle-orm";
import { rowsOf, type Queryable } from "../../db/client.ts";
import { accountQueues, postTargets, queueSlots } from "../../db/schema.ts";
import { problemError, type Problem } from "../../platform/host/content-check.ts";
import { freeOccurrences, type Occurrence, type Slot } from "./wall-clock.ts";

/** A slot must be at least this far ahead to be taken: a post queued now is never already due. */
export const QUEUE_MARGIN_MS = 60_000;

/** The advisory-lock namespace of queue slots (the claim uses 7242032, webhook triggers 7242033). */
const QUEUE_LOCK = 7242034;

/** Serialises shuffles of an account until the transaction ends (in one order, should several be locked). */
export async function lockQueues(tx: Queryable, accountIds: string[]) {
  for (const id of [...new Set(accountIds)].sort())
    await tx.execute(sql`select pg_advisory_xact_lock(${QUEUE_LOCK}, hashtext(${id}))`);
}

export interface StoredQueue {
  timeZone: string;
  slots: Slot[];
}

export async function queuesOf(db: Queryable, accountIds: string[]): Promise<Map<string, StoredQueue>> {
  if (!accountIds.length) return new Map();
  const rows = await db
    .select({ accountId: accountQueues.accountId, timeZone: accountQueues.timeZone, slots: accountQueues.slots })
    .from(accountQueues)
    .where(inArray(accountQueues.accountId, accountIds));
  return new Map(rows.map((r) => [r.accountId, { timeZone: r.timeZone, slots: r.slots as Slot[] }]));
}

/** The slots of an account already taken at or after `from`, as epoch milliseconds. */
export async function takenSlots(db: Queryable, accountId: string, from: Date): Promise<Set<number>> {
  const rows = await db
    .select({ at: queueSlots.slotAt })
    .from(queueSlots)
    .where(and(eq(queueSlots.accountId, accountId), gte(queueSlots.slotAt, from)));
  return new Set(rows.map((r) => r.at.getTime()));
}

export const queueEmpty = (accountId: string, index: number): Problem => ({
  code: "queue_empty",
  message: `targets[${index}] (account ${accountId}): the account has no queue slots.`,
  hint: `Give the account weekly slots with PUT /v1/accounts/${accountId}/queue, or send publish_at instead of queue.`,
  field: `targets[${index}].account_id`,
});

export const queueAndPublishAt: Problem = {
  code: "queue_and_publish_at",
  message: "queue: true and publish_at were both given.",
  hint: "Send queue: true to take each account's next free slot, or publish_at for a time of your own, not both.",
  field: "queue",
};

/**
 * Each account's next free slot from now (plus the margin), and the accounts without slots. Call it with
 * the accounts locked (lockQueues) to take the slots; without, it only previews them.
 */
export async function nextSlots(
  db: Queryable,
  accountIds: string[],
  now: Date,
): Promise<{ slots: Map<string, Occurrence>; empty: string[] }> {
  const ids = [...new Set(accountIds)];
  const queues = await queuesOf(db, ids);
  const from = new Date(now.getTime() + QUEUE_MARGIN_MS);
  const slots = new Map<string, Occurrence>();
  const empty: string[] = [];
  for (const id of ids) {
    const queue = queues.get(id);
    const [next] = queue?.slots.length
      ? freeOccurrences(queue.timeZone, queue.slots, from, await takenSlots(db, id, from), 1)
      : [];
    if (next) slots.set(id, next);
    else empty.push(id);
  }
  return { slots, empty };
}

/** Stamps each target of a new post (after its insert) with its account's slot: scheduled_time, due_at, queue_slot. */
export async function stampTargets(tx: Queryable, postId: string, slots: Map<string, Occurrence>) {
  for (const [accountId, o] of slots)
    await tx
      .update(postTargets)
      .set({ scheduledTime: o.at, dueAt: o.at, queueSlot: o.at })
      .where(and(eq(postTargets.postId, postId), eq(postTargets.accountId, accountId)));
}

/** Frees every slot of a post (it was moved off the queue or made due now). */
export async function freeSlots(tx: Queryable, postId: string) {
  await tx.delete(queueSlots).where(eq(queueSlots.postId, postId));
  await tx.update(postTargets).set({ queueSlot: null }).where(eq(postTargets.postId, postId));
}

/** Frees the slots of a post's accounts whose targets are all cancelled now (a thread keeps it while any item waits). */
export async function freeCancelledSlots(tx: Queryable, postId: string) {
  await tx.execute(sql`
    delete from queue_slots q where q.post_id = ${postId}::uuid and not exists (
      select 1 from post_targets t where t.post_id = q.post_id and t.account_id = q.account_id and t.status <> 'cancelled')`);
  await tx
    .update(postTargets)
    .set({ queueSlot: null })
    .where(and(eq(postTargets.postId, postId), eq(postTargets.status, "cancelled")));
}

/** Whether a post holds queue slots. */
export async function isQueued(db: Queryable, postId: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(queueSlots)
    .where(eq(queueSlots.postId, postId))
    .limit(1);
  return !!row;
}

/** How many candidate slots one claim statement tries beyond one per waiting post, earliest first. */
const CANDIDATES = 32;

/**
 * Claims the earliest free slots of one account for posts in this transaction, in the posts' order (one
 * post being created, or all the queued posts of a shuffle), without waiting on other transactions: each
 * candidate is tried with a transaction-scoped try-lock of (account, slot minute), so a slot another
 * transaction is claiming right now is passed over at once instead of waited for, and the insert skips one
 * committed since it was read. Many posts queued at once therefore take consecutive slots in parallel; one
 * whose transaction is then rolled back leaves its slot free for the next post. One statement per round
 * serves all the posts, so a shuffle of a long queue holds its locks for a few statements, not hundreds;
 * posts whose slot was taken meanwhile go round again, further on.
 */
export async function claimSlots(
  tx: Queryable,
  accountId: string,
  queue: StoredQueue,
  from: Date,
  postIds: string[],
  profileId: string,
): Promise<Map<string, Occurrence>> {
  const taken = await takenSlots(tx, accountId, from);
  const claimed = new Map<string, Occurrence>();
  let waiting = [...postIds];
  while (waiting.length) {
    const candidates = freeOccurrences(queue.timeZone, queue.slots, from, taken, waiting.length + CANDIDATES);
    const at = `{${candidates.map((c) => c.at.toISOString()).join(",")}}`;
    const ids = `{${waiting.join(",")}}`;
    // The function scan yields the candidates in order and the limit stops the try-locks once there is one
    // slot per waiting post; the n-th slot locked goes to the n-th post.
    const result = await tx.execute(sql`
      with c as (
        select l.s, row_number() over () as n from (
          select u.s from unnest(${at}::timestamptz[]) as u(s)
          where pg_try_advisory_xact_lock(hashtext(${accountId}), (extract(epoch from u.s) / 60)::int)
          limit ${waiting.length}
        ) l
      ),
      p as (select w.id, w.n from unnest(${ids}::uuid[]) with ordinality as w(id, n)),
      i as (
        insert into queue_slots (account_id, slot_at, post_id, profile_id)
        select ${accountId}::uuid, c.s, p.id, ${profileId}::uuid from c join p on p.n = c.n
        on conflict do nothing
        returning slot_at, post_id
      )
      select (select coalesce(json_agg(crier_iso(c.s)), '[]'::json) from c) as locked,
             (select coalesce(json_agg(json_build_object('at', crier_iso(i.slot_at), 'post', i.post_id)), '[]'::json) from i) as taken`);
    const [row] = rowsOf<{ locked: string[] | string; taken: { at: string; post: string }[] | string }>(result);
    const parse = <T>(v: T | string): T => (typeof v === "string" ? (JSON.parse(v) as T) : v);
    const locked = parse(row.locked).map((a) => new Date(a).getTime());
    for (const t of parse(row.taken)) {
      const when = new Date(t.at).getTime();
      claimed.set(
        t.post,
        candidates.find((c) => c.at.getTime() === when)!,
      );
    }
    waiting = waiting.filter((id) => !claimed.has(id));
    // Slots locked (taken now, by these posts or committed by another since they were read) and those
    // passed over before the last one locked (being claimed elsewhere) are not candidates again.
    const passed = locked.length ? Math.max(...locked) : Infinity;
    for (const c of candidates) if (c.at.getTime() <= passed) taken.add(c.at.getTime());
  }
  return claimed;
}

/**
 * Takes each account's next free slot for a post being created in this transaction (queue_slots' foreign
 * key to the post is checked at commit, so this runs before the post's insert), or throws the 400
 * queue_empty of the first target whose account has no slots.
 */
export async function takeSlots(
  tx: Queryable,
  postId: string,
  profileId: string,
  inputAccountIds: string[],
  now: Date,
): Promise<Map<string, Occurrence>> {
  const ids = [...new Set(inputAccountIds)];
  const queues = await queuesOf(tx, ids);
  const empty = ids.find((id) => !queues.get(id)?.slots.length);
  if (empty) throw problemError(queueEmpty(empty, inputAccountIds.indexOf(empty)));
  const from = new Date(now.getTime() + QUEUE_MARGIN_MS);
  const slots = new Map<string, Occurrence>();
  for (const id of ids)
    slots.set(id, (await claimSlots(tx, id, queues.get(id)!, from, [postId], profileId)).get(postId)!);
  return slots;
}
