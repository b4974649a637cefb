/**
 * A claim carries the copy's waiting publish results (migrations/0019_claim_carries_results.sql): it
 * writes them first, in its own transaction, so an account whose publish just ended can be given its next
 * target by the same call instead of one round trip later.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { claimDue } from "../../src/engine/claim.ts";
import { Recorder } from "../../src/engine/recorder.ts";
import { createLogger } from "../../src/log.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import { createHarness, type Harness } from "../support/harness.ts";

const COPY = "claim-carries-test";
let h: Harness;
let token: string;
let recorder: Recorder;

beforeAll(async () => {
  h = await createHarness();
  const p = await h.profile({ sandbox: true });
  token = p.token;
  await upsertConnectedAccount(h.ctx, {
    profileId: p.profileId,
    platform: "bluesky",
    remoteId: "did:plc:carries",
    username: "carries.test",
    credentials: { accessJwt: "a", refreshJwt: "r" },
  });
  recorder = new Recorder(h.db, COPY, createLogger("silent"), 60_000);
  // As the publish pool does while it claims: results wait for the next claim instead of being written.
  recorder.setCarrier({ carries: () => true, resultsWaiting: () => {} });
});
afterAll(() => h.close());

const claim = (results?: ReturnType<Recorder["takeForClaim"]>) => {
  const now = h.clock.now();
  return claimDue(h.db, {
    now,
    leaseUntil: new Date(now.getTime() + 60_000),
    claimedBy: COPY,
    caps: { bluesky: 4 },
    limit: 4,
    busyAccounts: [],
    results,
  });
};

const statusOf = async (id: string) =>
  (await h.db.rows<{ status: string }>(sql`select status from post_targets where id = ${id}::uuid`))[0].status;

test("the account of a carried result gets its next target in the same call, and the result is committed", async () => {
  const accounts = (await h.request("GET", "/v1/accounts", { token })).body.data as { id: string }[];
  for (const content of ["first", "second"]) {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content,
        publish_at: new Date(h.clock.now().getTime() + 60_000).toISOString(),
        targets: [{ account_id: accounts[0].id }],
      },
    });
    expect(res.status).toBe(201);
    h.clock.advance(1_000);
  }
  h.clock.advance(60_000);

  // One publish at a time per account: the second target waits for the first.
  const [first, ...none] = await claim();
  expect(none).toHaveLength(0);
  expect(first.job?.content).toBe("first");

  let written = false;
  const recorded = recorder
    .record(first.id, { status: "published", platformPostId: "at://first", at: h.clock.now() })
    .then(() => (written = true));
  const results = recorder.takeForClaim();
  expect(results?.ids).toEqual([first.id]);
  await Bun.sleep(20);
  expect(await statusOf(first.id)).toBe("processing"); // nothing wrote it meanwhile: it waits for the claim

  const [second, ...more] = await claim(results);
  expect(more).toHaveLength(0);
  expect(second.job?.content).toBe("second");
  expect(await statusOf(first.id)).toBe("published");
  expect(written).toBe(false); // the publish is told once the pool hands the claim's outcome back
  recorder.carried(results!);
  await recorded;
  expect(written).toBe(true);
});
