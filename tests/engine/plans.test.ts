/**
 * The engine's hot statements are prepared, so after a few calls PostgreSQL runs the generic plan it
 * cached for them, planned without the values. A generic plan that scans post_targets costs nothing on a
 * new server and grows with every post ever made: the recorder's batch took 24 ms among 10,000 targets
 * before its rows were found through the primary key. These tests ask each database for that generic plan
 * over a table of published targets and fail on a scan of the whole table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { rowsOf } from "../../src/db/client.ts";
import { recordResultsSql } from "../../src/engine/recorder.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import { createHarness, type Harness } from "../support/harness.ts";

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  const p = await h.profile();
  const account = await upsertConnectedAccount(h.ctx, {
    profileId: p.profileId,
    platform: "bluesky",
    remoteId: "did:plc:plans",
    username: "plans.test",
    credentials: { accessJwt: "a", refreshJwt: "r" },
  });
  // What a server that has been publishing for a while holds: targets published long ago, none claimed now.
  await h.db.rows(sql`
    with p as (
      insert into posts (profile_id, content) select ${p.profileId}::uuid, 'old post ' || i
      from generate_series(1, 5000) as i returning id
    )
    insert into post_targets (post_id, profile_id, account_id, platform, status, published_at)
    select id, ${p.profileId}::uuid, ${account.id}::uuid, 'bluesky', 'published', now() from p`);
  await h.db.rows(sql`analyze post_targets`);
});
afterAll(() => h?.close());

const dialect = new PgDialect();

/** The node types and relations of the generic plan of `query`, each placeholder given `values[name]`. */
async function genericPlan(query: SQL, values: Record<string, string>): Promise<string[]> {
  const built = dialect.sqlToQuery(query);
  const args = built.params.map((param) => {
    const name = (param as { name: string }).name;
    return `'${values[name].replaceAll("'", "''")}'`;
  });
  return h.db.db.transaction(async (tx) => {
    await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
    await tx.execute(sql.raw(`prepare plan_under_test as ${built.sql}`));
    const [row] = rowsOf<{ "QUERY PLAN": unknown }>(
      await tx.execute(sql.raw(`explain (format json) execute plan_under_test(${args.join(", ")})`)),
    );
    await tx.execute(sql`deallocate plan_under_test`);
    const plan = row["QUERY PLAN"];
    const nodes: string[] = [];
    const walk = (n: Record<string, unknown>) => {
      nodes.push(`${n["Node Type"]}${n["Relation Name"] ? ` on ${n["Relation Name"]}` : ""}`);
      for (const child of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(((typeof plan === "string" ? JSON.parse(plan) : plan) as { Plan: Record<string, unknown> }[])[0].Plan);
    return nodes;
  });
}

describe("generic plans of the engine's prepared statements", () => {
  test("the recorder's batch finds its targets through the primary key, not a scan of every target", async () => {
    const id = crypto.randomUUID();
    const nodes = await genericPlan(recordResultsSql, {
      rows: JSON.stringify([{ id, status: "published", held_as: "processing", at: new Date().toISOString() }]),
      ids: `{${id}}`,
      claimedBy: "copy-1",
    });
    expect(nodes).not.toContain("Seq Scan on post_targets");
    expect(nodes.some((n) => n.includes("on post_targets"))).toBe(true);
  });
});
