/**
 * Posting queues: an account's weekly slots (GET/PUT), its coming free slots, and the shuffle that
 * re-spreads its queued posts. Taking and freeing slots for posts lives in take.ts.
 */
import { randomInt } from "node:crypto";
import { and, eq, gte, inArray, sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import type { Queryable } from "../../db/client.ts";
import { accountQueues, accounts, posts, postTargets, queueSlots } from "../../db/schema.ts";
import { BadRequest, NotFound } from "../../http/errors.ts";
import { MAX_SLOTS, type Queue, type QueueOccurrence, type QueuePut, type ShuffledPost } from "./model.ts";
import { claimSlots, lockQueues, queueEmpty, queuesOf, QUEUE_MARGIN_MS, takenSlots } from "./take.ts";
import { DAYS, freeOccurrences, type Day, type Occurrence, type Slot, zoneName } from "./wall-clock.ts";

async function ownAccount(db: Queryable, profileId: string, accountId: string) {
  const [row] = await db
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(eq(accounts.id, accountId), eq(accounts.profileId, profileId)));
  if (!row) throw new NotFound("Account");
}

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

/** The slots in a stable order: by day of the week (mon first), then time. */
const sorted = (slots: Slot[]) =>
  [...slots].sort((a, b) => DAYS.indexOf(a.day) - DAYS.indexOf(b.day) || a.time.localeCompare(b.time));

/** The body checked: the zone's name as stored and the slots, or the 400 of the first fault. */
function checked(body: QueuePut): { timeZone: string; slots: Slot[] } {
  const timeZone = zoneName(body.time_zone);
  if (!timeZone)
    throw new BadRequest(
      "invalid_time_zone",
      `time_zone "${body.time_zone}" is not an IANA time zone.`,
      'Use a name from the IANA time zone database, such as "Europe/Berlin", "America/New_York" or "UTC".',
    );
  if (body.slots.length > MAX_SLOTS)
    throw new BadRequest(
      "too_many_slots",
      `${body.slots.length} slots were given; a queue keeps at most ${MAX_SLOTS}.`,
      "Remove some slots.",
    );
  const seen = new Set<string>();
  body.slots.forEach((s, i) => {
    if (!DAYS.includes(s.day as Day))
      throw new BadRequest(
        "invalid_slot",
        `slots[${i}].day "${s.day}" is not a day of the week.`,
        "Use mon, tue, wed, thu, fri, sat or sun.",
      );
    if (!TIME.test(s.time))
      throw new BadRequest(
        "invalid_slot",
        `slots[${i}].time "${s.time}" is not a time of day.`,
        'Use 24-hour HH:MM from 00:00 to 23:59, such as "09:00".',
      );
    const key = `${s.day} ${s.time}`;
    if (seen.has(key))
      throw new BadRequest("duplicate_slot", `slots[${i}] (${key}) is listed twice.`, "List each day and time once.");
    seen.add(key);
  });
  return { timeZone, slots: sorted(body.slots as Slot[]) };
}

export async function getQueue(ctx: AppContext, profileId: string, accountId: string): Promise<Queue> {
  await ownAccount(ctx.db.db, profileId, accountId);
  const [row] = await ctx.db.db.select().from(accountQueues).where(eq(accountQueues.accountId, accountId));
  return {
    account_id: accountId,
    time_zone: row?.timeZone ?? "UTC",
    slots: (row?.slots ?? []) as Slot[],
    updated_at: row ? row.updatedAt.toISOString() : null,
  };
}

/** Replaces the account's slots. Posts already queued keep their slots; shuffle moves them onto the new ones. */
export async function putQueue(ctx: AppContext, profileId: string, accountId: string, body: QueuePut): Promise<Queue> {
  // Another profile's account is 404 whatever the body: the body's faults are not its business.
  await ownAccount(ctx.db.db, profileId, accountId);
  const { timeZone, slots } = checked(body);
  const now = ctx.clock.now();
  await ctx.db.db
    .insert(accountQueues)
    .values({ accountId, profileId, timeZone, slots, updatedAt: now })
    .onConflictDoUpdate({ target: accountQueues.accountId, set: { timeZone, slots, updatedAt: now } });
  return { account_id: accountId, time_zone: timeZone, slots, updated_at: now.toISOString() };
}

const wire = (o: Occurrence): QueueOccurrence => ({ at: o.at.toISOString(), local: o.local, day: o.day, time: o.time });

/** The coming free slots (from a minute ahead, as a queued post would take them). */
export async function nextFree(
  ctx: AppContext,
  profileId: string,
  accountId: string,
  count: number,
): Promise<QueueOccurrence[]> {
  await ownAccount(ctx.db.db, profileId, accountId);
  const queue = (await queuesOf(ctx.db.db, [accountId])).get(accountId);
  if (!queue?.slots.length) return [];
  const from = new Date(ctx.clock.now().getTime() + QUEUE_MARGIN_MS);
  const taken = await takenSlots(ctx.db.db, accountId, from);
  return freeOccurrences(queue.timeZone, queue.slots, from, taken, count).map(wire);
}

/**
 * Re-spreads the account's queued posts whose targets there all still wait (scheduled) over the earliest
 * free slots from now, in random order: gaps left by cancelled posts and slots added since fill up. Each
 * moved post's publish_at becomes its earliest target's time again.
 */
export async function shuffle(ctx: AppContext, profileId: string, accountId: string): Promise<ShuffledPost[]> {
  await ownAccount(ctx.db.db, profileId, accountId);
  const moved = await ctx.db.db.transaction(async (tx) => {
    await lockQueues(tx, [accountId]);
    const queue = (await queuesOf(tx, [accountId])).get(accountId);
    if (!queue?.slots.length) {
      const p = queueEmpty(accountId, 0);
      throw new BadRequest(p.code, `account ${accountId} has no queue slots.`, p.hint);
    }
    const now = ctx.clock.now();
    const from = new Date(now.getTime() + QUEUE_MARGIN_MS);
    const held = await tx
      .select({ postId: queueSlots.postId, at: queueSlots.slotAt })
      .from(queueSlots)
      .where(and(eq(queueSlots.accountId, accountId), gte(queueSlots.slotAt, from)));
    if (!held.length) return [];
    // Locked against the engine and edits, the post first and then its targets as cancel and edits lock them
    // (in one order, so neither waits on the other in a cycle); a post with a target there no longer waiting
    // stays where it is.
    await tx
      .select({ id: posts.id })
      .from(posts)
      .where(
        inArray(
          posts.id,
          held.map((h) => h.postId),
        ),
      )
      .orderBy(posts.id)
      .for("update");
    const targets = await tx
      .select({ postId: postTargets.postId, status: postTargets.status })
      .from(postTargets)
      .where(
        and(
          eq(postTargets.accountId, accountId),
          inArray(
            postTargets.postId,
            held.map((h) => h.postId),
          ),
        ),
      )
      .for("update");
    const movable = held.filter((h) =>
      targets.every((t) => t.postId !== h.postId || t.status === "scheduled" || t.status === "cancelled"),
    );
    if (!movable.length) return [];
    await tx.delete(queueSlots).where(
      and(
        eq(queueSlots.accountId, accountId),
        inArray(
          queueSlots.postId,
          movable.map((h) => h.postId),
        ),
      ),
    );
    // Fisher-Yates: every order of the posts equally likely. Each then claims the earliest free slot, as a
    // create does, so posts queued on the account meanwhile never collide with the shuffle.
    const order = [...movable];
    for (let i = order.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    const slots = await claimSlots(
      tx,
      accountId,
      queue,
      from,
      order.map((h) => h.postId),
      profileId,
    );
    const ats = order.map((h) => slots.get(h.postId)!.at.toISOString());
    await tx.execute(sql`
      update post_targets t set scheduled_time = v.at, due_at = v.at, queue_slot = v.at, updated_at = ${now.toISOString()}::timestamptz
      from unnest(${`{${order.map((h) => h.postId).join(",")}}`}::uuid[], ${`{${ats.join(",")}}`}::timestamptz[]) as v(post_id, at)
      where t.post_id = v.post_id and t.account_id = ${accountId}::uuid and t.status = 'scheduled'`);
    const out: ShuffledPost[] = order.map((h) => ({
      post_id: h.postId,
      previous_at: h.at.toISOString(),
      ...wire(slots.get(h.postId)!),
    }));
    // publish_at is the earliest waiting target's time; updated_at moves forward even within a millisecond.
    await tx
      .update(posts)
      .set({
        publishAt: sql`(select min(t.scheduled_time) from post_targets t where t.post_id = "posts"."id" and t.status <> 'cancelled')`,
        updatedAt: sql`greatest(${now.toISOString()}::timestamptz, "posts"."updated_at" + interval '1 millisecond')`,
      })
      .where(
        inArray(
          posts.id,
          movable.map((h) => h.postId),
        ),
      );
    return out.sort((a, b) => a.at.localeCompare(b.at));
  });
  return moved;
}
