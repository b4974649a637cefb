/**
 * The claim reads each target's job in its own statement (migrations/0015_claim_jobs.sql): what it hands
 * the publish must be exactly what a fresh read of the claimed target gives, column for column, including
 * the thread reply ids and an edit made just before the claim.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { claimDue } from "../../src/engine/claim.ts";
import { jobFromClaim, loadJobs } from "../../src/engine/dispatch.ts";
import { storedBlueskyAccount } from "../support/stored-account.ts";
import { createHarness, type Harness } from "../support/harness.ts";

let h: Harness;
let token: string;
let accountId: string;

beforeAll(async () => {
  h = await createHarness();
  const p = await h.profile({ sandbox: true });
  token = p.token;
  accountId = await storedBlueskyAccount(h.ctx, p.profileId, "claimjob");
});
afterAll(() => h.close());

const claim = () => {
  const now = h.clock.now();
  return claimDue(h.db, {
    now,
    leaseUntil: new Date(now.getTime() + 60_000),
    claimedBy: "claim-job-test",
    caps: { bluesky: 4 },
    limit: 4,
    busyAccounts: [],
  });
};

/** What the publish would record: the account is free for its next target. */
const settle = (id: string, ppid: string) =>
  h.db.rows(
    sql`update post_targets set status = 'published', platform_post_id = ${ppid} where id = ${id}::uuid returning id`,
  );

async function schedule(body: Record<string, unknown>): Promise<string> {
  const res = await h.request("POST", "/v1/posts", {
    token,
    body: { publish_at: new Date(h.clock.now().getTime() + 60_000).toISOString(), ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

test("the claimed job equals a fresh read of the claimed target, edits included", async () => {
  const postId = await schedule({
    content: "first draft",
    media: [{ url: "https://example.com/a.png", type: "image" }],
    targets: [{ account_id: accountId, platform_options: { langs: ["en"] } }],
  });
  const edited = await h.request("PATCH", `/v1/posts/${postId}`, { token, body: { content: "as edited" } });
  expect(edited.status).toBe(200);
  h.clock.advance(61_000);

  const [claimed] = await claim();
  expect(claimed.job).toBeDefined();
  const job = jobFromClaim(claimed.job!);
  const fresh = (await loadJobs(h.ctx, [claimed.id])).get(claimed.id)!;
  expect(job).toEqual(fresh);
  expect(job.content).toBe("as edited");
  expect(job.target.status).toBe("processing");
  expect(job.target.attempts).toBe(1);
  expect(job.target.leaseUntil).toBeInstanceOf(Date);
  expect(job.target.platformOptions).toEqual({ langs: ["en"] });
  expect(job.account.id).toBe(accountId);
  expect(job.sandbox).toBe(true);
  expect(job.replyTo).toBeNull();
  await settle(claimed.id, "at://single");
});

test("a thread item's claimed job names the item it replies to and the thread's first item", async () => {
  const postId = await schedule({
    content: "a thread",
    targets: [{ account_id: accountId }, { account_id: accountId }, { account_id: accountId }],
  });
  h.clock.advance(61_000);
  for (const ppid of ["at://one", "at://two"]) {
    const [c] = await claim();
    expect(c.postId).toBe(postId);
    await settle(c.id, ppid);
  }
  const [third] = await claim();
  const job = jobFromClaim(third.job!);
  expect(job).toEqual((await loadJobs(h.ctx, [third.id])).get(third.id)!);
  expect({ replyTo: job.replyTo, root: job.root }).toEqual({ replyTo: "at://two", root: "at://one" });
});
