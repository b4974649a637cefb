// Shared by bench/dispatch.ts, bench/dispatch-copy.ts and bench/api.ts: a fresh PostgreSQL database, a
// context like `crier serve` builds, and bulk seeding of due targets.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { systemClock } from "../src/clock.ts";
import type { AppContext } from "../src/context.ts";
import { openPostgres, type Db } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { createLogger } from "../src/log.ts";
import type { LogLevel } from "../src/config.ts";
import { accountCredentials } from "../src/modules/accounts/service.ts";
import { createRegistry } from "../src/platform/host/registry.ts";
import { createStorage } from "../src/storage/index.ts";

export const BENCH_SECRET = "bench-secret-key-that-is-long-enough-0000";

export function baseUrl(): string {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!url) {
    console.error(
      "Set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server where databases may be created.",
    );
    process.exit(2);
  }
  return url;
}

/** Creates a scratch database and returns its URL and a drop function. */
export async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = baseUrl();
  const name = `crier_bench_${randomBytes(4).toString("hex")}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = openPostgres(url.toString(), 2);
  await migrate(db);
  await db.close();
  return {
    url: url.toString(),
    async drop() {
      const again = postgres(base, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

export function benchContext(url: string, env: Record<string, string>, poolSize = 10): AppContext {
  return contextOn(openPostgres(url, poolSize), { DATABASE_URL: url, ...env });
}

/** A context like benchContext's on a database already open (bench/scale's embedded burst opens PGlite). */
export function contextOn(db: Db, env: Record<string, string>): AppContext {
  const config = loadConfig({
    DATA_DIR: mkdtempSync(join(tmpdir(), "crier-bench-")),
    SECRET_KEY: BENCH_SECRET,
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "0",
    ...env,
  });
  const platforms = createRegistry();
  return {
    config,
    db,
    clock: systemClock,
    // Errors reach stderr: a run that loses results says why (BENCH_LOG_LEVEL=debug for more).
    log: createLogger((process.env.BENCH_LOG_LEVEL as LogLevel | undefined) ?? "error"),
    platforms,
    storage: createStorage(config),
    credentials: accountCredentials({ db, config, clock: systemClock }),
  };
}

/**
 * `count` text posts of one target each, spread round-robin over the accounts, due at
 * `firstDue + i × spacingMs` (all at once with spacing 0).
 */
export async function seedTargets(
  db: Db,
  profileId: string,
  accountIds: string[],
  count: number,
  firstDue: Date,
  spacingMs: number,
) {
  // In statements of 10,000 posts: 100,000 at once ran past the statement timeout.
  for (let from = 0; from < count; from += 10_000) {
    await seedChunk(db, profileId, accountIds, from, Math.min(count, from + 10_000) - 1, firstDue, spacingMs);
  }
}

async function seedChunk(
  db: Db,
  profileId: string,
  accountIds: string[],
  from: number,
  to: number,
  firstDue: Date,
  spacingMs: number,
) {
  await db.rows(sql`
    with ids as (
      select i, gen_random_uuid() as post_id, (${`{${accountIds.join(",")}}`}::uuid[])[1 + (i % ${accountIds.length})] as account_id
      from generate_series(${from}::int, ${to}::int) as i
    ), p as (
      insert into posts (id, profile_id, content) select post_id, ${profileId}::uuid, 'bench post ' || i from ids returning id
    )
    insert into post_targets (post_id, profile_id, account_id, platform, status, scheduled_time, due_at)
    select post_id, ${profileId}::uuid, account_id, 'bluesky', 'scheduled',
      ${firstDue.toISOString()}::timestamptz + (i * ${spacingMs}::float8) * interval '1 millisecond',
      ${firstDue.toISOString()}::timestamptz + (i * ${spacingMs}::float8) * interval '1 millisecond'
    from ids`);
}

/**
 * Empties the posts and everything hanging off them (targets, analytics rows) as new tables would be.
 * With `delete`, each drain left the next its dead rows and grown indexes: the same one-copy drain read
 * 90 buffer pages per target first and 113 after three more (bench/scale (d)), so later regimes paid for
 * earlier ones.
 */
export async function emptyPosts(db: Db): Promise<void> {
  await db.rows(sql`truncate posts cascade`);
}

/** The planner's statistics for the rows just seeded, so every drain's plans start from the same facts. */
export async function analyzeSeed(db: Db): Promise<void> {
  await db.rows(sql`analyze posts`);
  await db.rows(sql`analyze post_targets`);
}

export const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Exits at once with the install command when wrk is missing, before any seeding (bench/api, bench/growth). */
export function requireWrk(bench: string): void {
  if (spawnSync("wrk", ["--version"]).error) {
    console.error(`${bench} needs wrk on the PATH (apt-get install wrk).`);
    process.exit(2);
  }
}
