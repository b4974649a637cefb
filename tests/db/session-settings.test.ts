/**
 * What the pool's connections ask of their PostgreSQL session (src/db/client.ts sessionSettings).
 * PostgreSQL only: the embedded database has no pool and no such settings.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { openPostgres, type Db } from "../../src/db/client.ts";
import { testDatabase } from "../support/db.ts";

const onPostgres = !!process.env.TEST_DATABASE_URL;
if (!onPostgres) console.log("session-settings.test.ts: skipped, PostgreSQL only (set TEST_DATABASE_URL)");

let direct: Db & { url?: string };
beforeAll(async () => {
  if (onPostgres) direct = await testDatabase();
});
afterAll(async () => {
  if (onPostgres) await direct?.close();
});

async function settings(db: Db) {
  const [row] = await db.rows<{ jit: string; timeout: string }>(
    sql`select current_setting('jit') as jit, current_setting('statement_timeout') as timeout`,
  );
  return row!;
}

test.skipIf(!onPostgres)("every connection of the pool runs with the statement timeout and without JIT", async () => {
  const pool = openPostgres(direct.url!, 3, 2_500);
  try {
    // Three at once: each on its own connection of the pool.
    const seen = await Promise.all([settings(pool), settings(pool), settings(pool)]);
    for (const s of seen) expect(s).toEqual({ jit: "off", timeout: "2500ms" });
  } finally {
    await pool.close();
  }
});

test.skipIf(!onPostgres)("a statement timeout of 0 sends no session settings: the server's own apply", async () => {
  const bare = postgres(direct.url!, { max: 1, onnotice: () => {} });
  const pool = openPostgres(direct.url!, 1, 0);
  try {
    const [server] = await bare<{ jit: string; timeout: string }[]>`
      select current_setting('jit') as jit, current_setting('statement_timeout') as timeout`;
    expect(await settings(pool)).toEqual({ jit: server!.jit, timeout: server!.timeout });
  } finally {
    await pool.close();
    await bare.end();
  }
});
