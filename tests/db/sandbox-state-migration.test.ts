/**
 * Migration 0024 (sandbox state per profile, security issue 26): a server upgraded with a shared
 * sandbox_state document per platform gives each sandbox profile that has an account on the platform a
 * copy of it (so its accounts' tokens keep working), drops the rest, and keys the table by profile.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { journal, migrationSql } from "../../migrations/index.ts";
import { openPglite, openPostgres, type Db } from "../../src/db/client.ts";

const TARGET = "0024_sandbox_state_per_profile";
let db: Db;
let dropDatabase = async () => {};

async function run(tag: string) {
  for (const statement of migrationSql[tag].split("--> statement-breakpoint"))
    if (statement.trim()) await db.rows(sql.raw(statement));
}

beforeAll(async () => {
  const base = process.env.TEST_DATABASE_URL;
  if (base) {
    const name = `crier_t_mig_${randomBytes(4).toString("hex")}`;
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(base);
    url.pathname = `/${name}`;
    db = openPostgres(url.toString(), 2);
    dropDatabase = async () => {
      const again = postgres(base, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    };
  } else db = await openPglite(undefined);
  // The schema as it was before 0024.
  for (const entry of journal.entries) {
    if (entry.tag === TARGET) break;
    await run(entry.tag);
  }
}, 120_000);

afterAll(async () => {
  await db.close();
  await dropDatabase();
});

test("the shared document goes to each sandbox profile with an account on the platform, keyed by profile", async () => {
  const [a, b, idle, live] = await db.rows<{ id: string }>(sql`
    INSERT INTO profiles (name, sandbox) VALUES ('a', true), ('b', true), ('idle', true), ('live', false)
    RETURNING id`);
  for (const [profile, platform] of [
    [a.id, "telegram"],
    [b.id, "telegram"],
    [b.id, "bluesky"],
    [live.id, "telegram"],
  ])
    await db.rows(sql`
      INSERT INTO accounts (profile_id, platform, remote_id, username, credentials, metadata)
      VALUES (${profile}::uuid, ${platform}, ${`r-${platform}`}, 'u', 'v1.x', '{}'::jsonb)`);
  await db.rows(sql`
    INSERT INTO sandbox_state (platform, version, state) VALUES ('telegram', 7, 'tg-doc'), ('bluesky', 3, 'bs-doc'),
      ('reddit', 2, 'nobody')`);

  await run(TARGET);

  const rows = await db.rows<{ profile_id: string; platform: string; version: string | number; state: string }>(
    sql`SELECT profile_id, platform, version, state FROM sandbox_state ORDER BY platform, state, profile_id`,
  );
  const got = rows.map((r) => [r.profile_id, r.platform, Number(r.version), r.state]);
  expect(got).toEqual(
    expect.arrayContaining([
      [a.id, "telegram", 7, "tg-doc"],
      [b.id, "telegram", 7, "tg-doc"],
      [b.id, "bluesky", 3, "bs-doc"],
    ]),
  );
  // Not the live profile, not a sandbox profile without an account there, not a platform nobody uses.
  expect(got).toHaveLength(3);
  expect(got.some((r) => r[0] === idle.id || r[0] === live.id)).toBe(false);

  // One document per profile and platform; a profile's removal takes its documents with it.
  await expect(
    db.rows(
      sql`INSERT INTO sandbox_state (profile_id, platform, version, state) VALUES (${a.id}::uuid, 'telegram', 1, 'x')`,
    ),
  ).rejects.toThrow();
  await expect(
    db.rows(sql`INSERT INTO sandbox_state (platform, version, state) VALUES ('x', 1, 'x')`),
  ).rejects.toThrow();
  await db.rows(sql`DELETE FROM accounts WHERE profile_id = ${a.id}::uuid`);
  await db.rows(sql`DELETE FROM profiles WHERE id = ${a.id}::uuid`);
  const left = await db.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM sandbox_state`);
  expect(left[0].n).toBe(2);
}, 60_000);
