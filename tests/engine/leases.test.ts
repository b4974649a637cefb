/**
 * Lease renewal works from the ids this copy holds, read at the start of a tick; a result can be written in
 * between. A publish that ended submitted (the platform still processing) has no lease: its status checks
 * take one when they are due. Renewing it anyway kept the checks away until that lease ran out, and the
 * target failed outcome_unknown although the platform had the post (seen in tests/engine/workflows-media).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { claimDue } from "../../src/engine/claim.ts";
import { claimPolls } from "../../src/engine/dispatch.ts";
import { expireLeases, renewLeases } from "../../src/engine/housekeeping.ts";
import { Recorder } from "../../src/engine/recorder.ts";
import { createLogger } from "../../src/log.ts";
import { storedBlueskyAccount } from "../support/stored-account.ts";
import { createHarness, type Harness } from "../support/harness.ts";

const COPY = "leases-test";
let h: Harness;
let token: string;
let accountId: string;

beforeAll(async () => {
  h = await createHarness();
  const p = await h.profile({ sandbox: true });
  token = p.token;
  accountId = await storedBlueskyAccount(h.ctx, p.profileId, "leases");
});
afterAll(() => h.close());

test("a renewal that comes after the result gives no lease back: the submitted target is still checked", async () => {
  const res = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "processing on the platform",
      publish_at: new Date(h.clock.now().getTime() + 60_000).toISOString(),
      targets: [{ account_id: accountId }],
    },
  });
  expect(res.status).toBe(201);
  h.clock.advance(61_000);
  const now = h.clock.now();
  const [target] = await claimDue(h.db, {
    now,
    leaseUntil: new Date(now.getTime() + 120_000),
    claimedBy: COPY,
    caps: { bluesky: 1 },
    limit: 1,
    busyAccounts: [],
  });
  const ids = [target.id]; // what the tick read as being published

  const recorder = new Recorder(h.db, COPY, createLogger("silent"), 120_000);
  await recorder.record(target.id, {
    status: "submitted",
    submittedHandle: "video-container-1",
    submitDeadline: new Date(now.getTime() + 3_600_000),
    dueAt: new Date(now.getTime() + 10_000),
    at: now,
  });
  await renewLeases(h.db, COPY, ids, new Date(now.getTime() + 120_000));

  // The next check is due in 10 s and takes the target; nothing expires it meanwhile.
  h.clock.advance(11_000);
  expect(await claimPolls(h.ctx, { claimedBy: COPY, leaseMs: 120_000, submitPollMs: 10_000 } as never, 10)).toEqual([
    target.id,
  ]);
  h.clock.advance(200_000);
  await renewLeases(h.db, COPY, ids, new Date(h.clock.now().getTime() + 120_000)); // the check is still running
  expect(await expireLeases(h.db, h.clock.now(), 0)).toBe(0);
  const [row] = await h.db.rows<{ status: string }>(sql`select status from post_targets where id = ${target.id}::uuid`);
  expect(row.status).toBe("submitted");
});
