/**
 * The SQL functions live in migrations/functions, one file each, applied after the numbered migrations and
 * again whenever a file's text changes (src/db/migrate.ts). The numbered migrations that defined them
 * before stay as they ran on users' databases; a database migrated the new way must hold exactly the
 * functions the numbered migrations alone left, and a new numbered migration must not define any.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { sql } from "drizzle-orm";
import { functionSql, journal, migrationSql } from "../../migrations/index.ts";
import type { Db } from "../../src/db/client.ts";
import { functionOrder, migrate } from "../../src/db/migrate.ts";
import { seedVersion } from "../../src/db/seed.ts";
import { migrationIndex } from "../../scripts/migration-index.ts";
import { applyNumberedMigrations, emptyDatabase, testDatabase } from "../support/db.ts";

// The last numbered migration written before the function files: those up to it may define functions
// (they already ran on users' databases), none after it may.
const LAST_WITH_FUNCTIONS = "0025_account_credentials_expiry";
// Function files changed since the numbered migrations stopped defining functions (a later release's
// column in them): the numbered-only database gets these files too before the two are compared.
// 0027: first comments (crier_record_results, crier_target_json); 0028: post_targets.queue_slot
// (crier_target_json); 0029: posts.series_id (crier_post_json); a claim that carries the copy's waiting
// results (crier_record_and_claim, new); a claim that leaves out accounts publishing in another copy
// (crier_claim).
const CHANGED_SINCE = [
  "crier_record_results",
  "crier_target_json",
  "crier_post_json",
  "crier_record_and_claim",
  "crier_claim",
];

let numberedOnly: Db;
let migrated: Db;

beforeAll(async () => {
  numberedOnly = await emptyDatabase();
  await applyNumberedMigrations(numberedOnly);
  for (const name of CHANGED_SINCE) await numberedOnly.rows(sql.raw(functionSql[name]));
  migrated = await testDatabase();
}, 120_000);

afterAll(async () => {
  await numberedOnly?.close();
  await migrated?.close();
});

/** Every function and trigger of the schema, as PostgreSQL prints them back. */
async function definitions(db: Db) {
  const functions = await db.rows<{ signature: string; def: string }>(sql`
    SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS def
    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace ORDER BY 1`);
  const triggers = await db.rows<{ name: string; def: string; enabled: string }>(sql`
    SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS def, t.tgenabled AS enabled
    FROM pg_trigger t WHERE NOT t.tgisinternal ORDER BY 1`);
  return { functions, triggers };
}

const fnDef = async (db: Db, signature: string) =>
  (await db.rows<{ def: string }>(sql`SELECT pg_get_functiondef(${signature}::regprocedure) AS def`))[0].def;

test("a database migrated with the function files holds exactly what the numbered migrations alone left", async () => {
  const before = await definitions(numberedOnly);
  const after = await definitions(migrated);
  expect(before.functions.length).toBeGreaterThan(20);
  // Functions whose file changed since the switch differ by that change, which the release's numbered
  // migration needs (its column): the others must be exactly as the numbered migrations left them.
  const same = (fs: { signature: string }[]) =>
    fs.filter((f) => !CHANGED_SINCE.some((n) => f.signature.startsWith(`${n}(`)));
  expect(same(after.functions)).toEqual(same(before.functions));
  expect(after.functions.map((f) => f.signature)).toEqual(before.functions.map((f) => f.signature));
  expect(after.triggers).toEqual(before.triggers);
  // The claim keeps its plan setting: it sits in its file now.
  expect(after.functions.find((f) => f.signature.startsWith("crier_claim("))?.def).toContain(
    "SET plan_cache_mode TO 'force_generic_plan'",
  );
});

test("every crier_ function has its file, named after it, and every file defines its function", async () => {
  const names = (
    await migrated.rows<{ name: string }>(sql`
      SELECT DISTINCT proname AS name FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY 1`)
  ).map((r) => r.name);
  expect(Object.keys(functionSql).sort()).toEqual(names);
  for (const [name, text] of Object.entries(functionSql))
    expect(text).toMatch(new RegExp(`CREATE OR REPLACE FUNCTION ${name}\\(`));
  const recorded = await migrated.rows<{ name: string }>(
    sql`SELECT name FROM drizzle.crier_repeatable_migrations ORDER BY name`,
  );
  expect(recorded.map((r) => r.name)).toEqual(names);
});

test("numbered migrations after the function files define no function (edit migrations/functions instead)", () => {
  const tags = journal.entries.map((e) => e.tag);
  const later = tags.slice(tags.indexOf(LAST_WITH_FUNCTIONS) + 1);
  const offenders = later.filter((tag) =>
    /\b(CREATE\s+(OR\s+REPLACE\s+)?FUNCTION|ALTER\s+FUNCTION)\b/i.test(migrationSql[tag]),
  );
  expect(offenders).toEqual([]);
});

test("migrations/index.ts lists every numbered migration and every function file (bun scripts/gen-migrations.ts --index-only)", () => {
  expect(readFileSync("migrations/index.ts", "utf8")).toBe(migrationIndex());
  const files = readdirSync("migrations/functions").filter((f) => f.endsWith(".sql"));
  expect(files.length).toBe(Object.keys(functionSql).length);
});

test("functions are applied callee first, then by name; a cycle is refused", () => {
  const order = functionOrder(functionSql);
  expect(order.indexOf("crier_iso")).toBeLessThan(order.indexOf("crier_target_json"));
  expect(order.indexOf("crier_target_json")).toBeLessThan(order.indexOf("crier_post_json"));
  expect(order.indexOf("crier_post_status_of")).toBeLessThan(order.indexOf("crier_post_status"));
  expect(order.indexOf("crier_thread_predecessors")).toBeLessThan(order.indexOf("crier_claim"));
  expect(functionOrder({ b_x: "b_x() a_y()", a_y: "", c: "" })).toEqual(["a_y", "b_x", "c"]);
  expect(() => functionOrder({ f_a: "f_b()", f_b: "f_a()" })).toThrow("f_a → f_b → f_a");
});

/** Runs `fn` with a function file's text changed as a new release would change it, then restores it. */
async function withFile<T>(name: string, text: string, fn: () => Promise<T>): Promise<T> {
  const original = functionSql[name];
  functionSql[name] = text;
  try {
    return await fn();
  } finally {
    functionSql[name] = original;
  }
}

const ISO = functionSql.crier_iso;

test("a changed file is applied again at the next start, and only then", async () => {
  const stamp = async () =>
    (await migrated.rows<{ iso: string }>(sql`SELECT crier_iso('2026-11-26T05:06:07.089Z'::timestamptz) AS iso`))[0]
      .iso;
  expect(await stamp()).toBe("2026-11-26T05:06:07.089Z");
  const changed = ISO.replace('SS.MS"Z"', 'SS"Z"');
  expect(changed).not.toBe(ISO);
  const versions = new Set([seedVersion()]);
  await withFile("crier_iso", changed, async () => {
    versions.add(seedVersion()); // a new embedded seed for the changed set
    await migrate(migrated);
    expect(await stamp()).toBe("2026-11-26T05:06:07Z");
    // Unchanged text is not applied again: a hand edit in the database stays until the file changes.
    await migrated.rows(sql.raw(ISO));
    await migrate(migrated);
    expect(await stamp()).toBe("2026-11-26T05:06:07.089Z");
  });
  expect(versions.size).toBe(2);
  await migrate(migrated);
  expect(await stamp()).toBe("2026-11-26T05:06:07.089Z");
  const [row] = await migrated.rows<{ checksum: string }>(
    sql`SELECT checksum FROM drizzle.crier_repeatable_migrations WHERE name = 'crier_iso'`,
  );
  expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
}, 60_000);

test("a file that changes its function's return type replaces it (CREATE OR REPLACE alone is refused)", async () => {
  const result = async () =>
    (
      await migrated.rows<{ r: string }>(
        sql`SELECT pg_get_function_result('crier_iso(timestamptz)'::regprocedure) AS r`,
      )
    )[0].r;
  const asVarchar = ISO.replace("RETURNS text", "RETURNS varchar");
  expect(asVarchar).not.toBe(ISO);
  await expect(migrated.rows(sql.raw(asVarchar))).rejects.toThrow();
  await withFile("crier_iso", asVarchar, () => migrate(migrated));
  expect(await result()).toBe("character varying");
  await migrate(migrated);
  expect(await result()).toBe("text");
  // Its callers still work.
  const [post] = await migrated.rows<{ j: unknown }>(sql`SELECT crier_post_json(gen_random_uuid()) AS j`);
  expect(post.j).toBeNull();
}, 60_000);

test("a file that changes its function's arguments leaves no old overload behind", async () => {
  const signatures = async () =>
    (
      await migrated.rows<{ s: string }>(
        sql`SELECT oid::regprocedure::text AS s FROM pg_proc WHERE proname = 'crier_iso' ORDER BY 1`,
      )
    ).map((r) => r.s);
  const twoArgs = ISO.replace("crier_iso(p timestamptz)", "crier_iso(p timestamptz, p_unused integer DEFAULT 0)");
  expect(twoArgs).not.toBe(ISO);
  await withFile("crier_iso", twoArgs, () => migrate(migrated));
  expect(await signatures()).toEqual(["crier_iso(timestamp with time zone,integer)"]);
  await migrate(migrated);
  expect(await signatures()).toEqual(["crier_iso(timestamp with time zone)"]);
  expect(await fnDef(migrated, "crier_iso(timestamptz)")).toBe(await fnDef(numberedOnly, "crier_iso(timestamptz)"));
}, 60_000);

test("a file that fails stops the start and leaves every function as it was", async () => {
  const before = await definitions(migrated);
  const broken = functionSql.crier_post_status.replace("FROM post_targets", "FROM no_such");
  await withFile("crier_post_status", broken, async () => {
    await expect(migrate(migrated)).rejects.toThrow();
  });
  expect(await definitions(migrated)).toEqual(before);
}, 60_000);

/** Runs `fn` with one more numbered migration in the journal, as the next release would bring it. */
async function withMigration<T>(text: string, fn: () => Promise<T>): Promise<T> {
  const tag = "9999_next_release";
  const when = Math.max(...journal.entries.map((e) => e.when)) + 1;
  journal.entries.push({ idx: journal.entries.length, version: "7", when, tag, breakpoints: true });
  migrationSql[tag] = text;
  try {
    return await fn();
  } finally {
    journal.entries.pop();
    delete migrationSql[tag];
  }
}

test("after a numbered migration every function is checked again: one it broke fails the whole upgrade", async () => {
  const columns = async () =>
    (
      await migrated.rows<{ n: number }>(sql`
        SELECT count(*)::int AS n FROM information_schema.columns
        WHERE table_name = 'post_targets' AND column_name = 'adjustments'`)
    )[0].n;
  const applied = async () =>
    (await migrated.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`))[0].n;
  const before = await applied();
  // crier_target_json reads t.adjustments: dropping it without changing the function is refused, and the
  // migration itself is rolled back with it.
  await withMigration(`ALTER TABLE "post_targets" DROP COLUMN "adjustments";`, async () => {
    await expect(migrate(migrated)).rejects.toThrow(/adjustments/);
  });
  expect(await columns()).toBe(1);
  expect(await applied()).toBe(before);
}, 60_000);

test("a release's new column and its function file's change arrive together", async () => {
  const next = functionSql.crier_target_json.replace(
    "'adjustments', coalesce(t.adjustments, '[]'::jsonb),",
    "'adjustments', coalesce(t.adjustments, '[]'::jsonb), 'note', t.note,",
  );
  expect(next).not.toBe(functionSql.crier_target_json);
  await withMigration(`ALTER TABLE "post_targets" ADD COLUMN "note" text;`, () =>
    withFile("crier_target_json", next, () => migrate(migrated)),
  );
  const [row] = await migrated.rows<{ j: Record<string, unknown> }>(sql`
    SELECT crier_target_json(ROW(t.*)::post_targets) AS j
    FROM (SELECT (NULL::post_targets).*) t`);
  expect(row.j).toHaveProperty("note", null);
}, 60_000);
