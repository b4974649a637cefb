/**
 * A publish holds one of its platform's slots while the platform call runs, and its account until the
 * result is written. A result write that waits (here on a row lock another connection holds) must not keep
 * other accounts' targets from going out in that slot. PostgreSQL only: it needs a second connection.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";
import { until } from "../support/until.ts";

const pg = !!process.env.TEST_DATABASE_URL;
let h: EngineHarness;
let other: postgres.Sql;

beforeAll(async () => {
  if (!pg) return;
  // One Bluesky publish at a time in this copy.
  h = await engineHarness({ env: { CRIER_BLUESKY_CONCURRENCY: "1" } });
  other = postgres(h.db.url!, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await other?.end();
  await h?.close();
});

const statusOf = async (content: string) =>
  (
    await h.db.rows<{ status: string }>(
      sql`select t.status from post_targets t join posts p on p.id = t.post_id where p.content = ${content}`,
    )
  )[0].status;

test.skipIf(!pg)("the slot is free once the platform answered, while the result is still being written", async () => {
  const { profileId, token } = await h.profile();
  const first = await h.bluesky(profileId, "slot-first.test");
  const second = await h.bluesky(profileId, "slot-second.test");
  for (const [content, account, inMs] of [
    ["slot first", first, 1000],
    ["slot second", second, 2000],
  ] as const) {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content,
        publish_at: new Date(h.clock.now().getTime() + inMs).toISOString(),
        targets: [{ account_id: account }],
      },
    });
    expect(res.status).toBe(201);
  }
  h.clock.advance(2000);
  // The first publish reaches the platform, which holds its answer a moment: meanwhile its row is locked.
  h.emulator.failNext({ kind: "timeout", on: "createRecord", delayMs: 300 });
  const ticked = h.engine.tick();
  await until(
    "the first post on the platform",
    () => (h.emulator.posts().some((p) => p.text === "slot first") ? true : undefined),
    5,
    10,
  );
  // The one slot is taken: the second target waits for it (claimed ahead, src/engine/pool.ts).
  expect(h.emulator.posts().some((p) => p.text === "slot second")).toBe(false);
  await other.begin(async (tx) => {
    await tx`select t.id from post_targets t join posts p on p.id = t.post_id where p.content = 'slot first' for update of t`;
    // The first result cannot be written while we hold its row; the second account's target goes out anyway
    // (its own result is written after the first's: the recorder writes one batch at a time).
    await until(
      "the second post on the platform",
      () => (h.emulator.posts().some((p) => p.text === "slot second") ? true : undefined),
      5,
      10,
    );
    expect(await statusOf("slot first")).toBe("processing");
  });
  await ticked;
  await h.engine.runUntilIdle();
  expect(await statusOf("slot first")).toBe("published");
  expect(await statusOf("slot second")).toBe("published");
  expect(
    h.emulator
      .posts()
      .filter((p) => p.text.startsWith("slot "))
      .map((p) => p.text),
  ).toEqual(["slot first", "slot second"]);
});
