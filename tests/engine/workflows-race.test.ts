import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgres, type Db } from "../../src/db/client.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import type { AppContext } from "../../src/context.ts";
import { workflowHarness, type WorkflowHarness } from "../support/workflow-kit.ts";

// Two copies of the engine, each with its own connection pool, polling one workflow on one PostgreSQL
// database at once, with on-demand checks racing them. PGlite is one connection: PostgreSQL only.
const pg = !!process.env.TEST_DATABASE_URL;

describe.skipIf(!pg)("two engines polling one workflow (PostgreSQL only: skipped without TEST_DATABASE_URL)", () => {
  let h: WorkflowHarness;
  let second: Db;
  const POSTS = 20;

  beforeAll(async () => {
    h = await workflowHarness();
    second = openPostgres((h.db as Db & { url: string }).url, 10);
  });
  afterAll(async () => {
    await second?.close();
    await h?.stop();
  });

  test("every source post is copied exactly once to each destination", async () => {
    const src = await h.connect("bluesky", { handle: "race-source.test" });
    const tg = await h.connect("telegram", { channel: "@wf_race" });
    const x = await h.connect("twitter");
    h.clock.advance(1000);
    const wf = (
      await h.request("POST", "/v1/workflows", {
        token: h.token,
        body: { name: "race", source_account_id: src, target_account_ids: [tg, x], is_active: true },
      })
    ).body.data;
    h.clock.advance(1000);
    for (let i = 0; i < POSTS; i++) {
      await h.native(src, `race item ${i}`);
      h.clock.advance(1000);
    }
    const a = createEngine(h.ctx, { id: "copy-a" });
    const b = createEngine({ ...h.ctx, db: second } as AppContext, { id: "copy-b" });
    const checks = Array.from({ length: 4 }, () =>
      h.request("POST", `/v1/workflows/${wf.id}/check`, { token: h.token }),
    );
    await Promise.all([a.runUntilIdle(), b.runUntilIdle(), ...checks]);
    // Every poll due later too: the lease is free again and a second round takes nothing new.
    h.clock.advance(h.ctx.config.workflowPollIntervalSeconds * 1000 + 1000);
    await Promise.all([a.runUntilIdle(), b.runUntilIdle()]);
    await Promise.all([a.stop(), b.stop()]);
    await h.engine.runUntilIdle();

    for (const platform of ["telegram", "twitter"]) {
      const texts = h.postsWith(platform, "race item");
      const duplicates = texts.length - new Set(texts).size;
      console.log(
        `workflow race: ${platform}: ${texts.length} posts for ${POSTS} source posts, ${duplicates} duplicates`,
      );
      expect(duplicates).toBe(0);
      expect(texts.length).toBe(POSTS);
    }
  }, 120_000);
});
