/**
 * Client-side deadlines on PostgreSQL statements (src/db/deadline.ts): what a caller learns when one
 * passes, and that nothing given up on runs later. PostgreSQL only: the embedded database runs in
 * process and its statements carry no client-side deadline.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openPostgres, type Db } from "../../src/db/client.ts";
import { DatabaseTimeout, withQueryDeadline } from "../../src/db/deadline.ts";
import { testDatabase } from "../support/db.ts";
import { freezableProxy, type FreezableProxy } from "../support/freezable-proxy.ts";

const onPostgres = !!process.env.TEST_DATABASE_URL;
if (!onPostgres) console.log("deadline.test.ts: skipped, PostgreSQL only (set TEST_DATABASE_URL)");

let direct: Db & { url?: string };

beforeAll(async () => {
  if (!onPostgres) return;
  direct = await testDatabase();
  await direct.rows(sql`create table deadline_marks (label text not null)`);
});
afterAll(async () => {
  if (onPostgres) await direct?.close();
});

const marks = async (label: string) =>
  Number(
    (await direct.rows<{ n: string }>(sql`select count(*) as n from deadline_marks where label = ${label}`))[0]!.n,
  );

/** The codes of an error and of what it wraps (drizzle wraps the driver's error in `cause`). */
function codes(error: unknown): string[] {
  const out: string[] = [];
  for (let e = error; e && typeof e === "object"; e = (e as { cause?: unknown }).cause)
    if (typeof (e as { code?: unknown }).code === "string") out.push((e as { code: string }).code);
  return out;
}

/** The DatabaseTimeout an error is or wraps. */
function timeoutIn(error: unknown): DatabaseTimeout | undefined {
  for (let e = error; e && typeof e === "object"; e = (e as { cause?: unknown }).cause)
    if (e instanceof DatabaseTimeout) return e;
  return undefined;
}

async function failure(work: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const t0 = performance.now();
  try {
    await work();
  } catch (error) {
    return { error, ms: performance.now() - t0 };
  }
  throw new Error("expected the work to fail");
}

test.skipIf(!onPostgres)(
  "a server that answers: the statement is cancelled at the deadline, a known outcome (57014)",
  async () => {
    const { error, ms } = await failure(() => withQueryDeadline(300, () => direct.db.execute(sql`select pg_sleep(5)`)));
    expect(timeoutIn(error)).toBeUndefined();
    expect(codes(error)).toContain("57014");
    expect(ms).toBeLessThan(1500);
  },
);

test.skipIf(!onPostgres)(
  "a server that never answers: DatabaseTimeout after the deadline and the grace, saying it may have applied",
  async () => {
    const proxy = await freezableProxy(direct.url!);
    const db = openPostgres(proxy.url, 2);
    try {
      await db.rows(sql`select 1`);
      proxy.freeze();
      const { error, ms } = await failure(() =>
        withQueryDeadline(300, () => db.db.execute(sql`insert into deadline_marks values ('frozen')`)),
      );
      expect(timeoutIn(error)?.mayHaveApplied).toBe(true);
      expect(ms).toBeLessThan(1000);
    } finally {
      proxy.resume({ reset: true });
      await db.close().catch(() => {});
      await proxy.stop();
    }
  },
  // The assertions hold within the first second; closing the client after the reset can take its full
  // end() timeout of 5 s on some machines (postgres.js waits for the connection the proxy dropped).
  15_000,
);

test.skipIf(!onPostgres)(
  "a transaction still waiting for a connection at its deadline is given up, and never runs once one frees",
  async () => {
    // One connection, busy for 2 s with a statement outside any deadline.
    const db = openPostgres(direct.url!, 1);
    try {
      const busy = db.rows(sql`select pg_sleep(2)`);
      await Bun.sleep(100);
      const { error, ms } = await failure(() =>
        withQueryDeadline(300, () =>
          db.db.transaction(async (tx) => {
            await tx.execute(sql`insert into deadline_marks values ('late')`);
          }),
        ),
      );
      expect(timeoutIn(error)?.mayHaveApplied).toBe(false);
      expect(ms).toBeLessThan(1000);
      await busy;
      await Bun.sleep(500);
      expect(await marks("late")).toBe(0);
      // The connection is fine afterwards.
      expect(await db.rows(sql`select 1 as ok`)).toEqual([{ ok: 1 }]);
    } finally {
      await db.close();
    }
  },
);
