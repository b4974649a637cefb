/**
 * Which accounts a claim looks at (crier_claim step 1): accounts publishing already, to this copy or to
 * another, and accounts another claimer holds at that moment, never take the place of an account that
 * can be claimed. The second test needs a second connection holding the accounts' locks: PostgreSQL only.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { claimDue } from "../../src/engine/claim.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

const pg = !!process.env.TEST_DATABASE_URL;
let h: EngineHarness;
/** Accounts in the order their targets fall due: each has two, the second after every account's first. */
const accounts: string[] = [];

beforeAll(async () => {
  h = await engineHarness();
  const { profileId, token } = await h.profile();
  for (let i = 0; i < 12; i++) accounts.push(await h.bluesky(profileId, `claim-accounts-${i}.test`));
  for (const round of [0, 1])
    for (const [i, account] of accounts.entries()) {
      const res = await h.request("POST", "/v1/posts", {
        token,
        body: {
          content: `round ${round} account ${i}`,
          publish_at: new Date(h.clock.now().getTime() + 1000 + round * 10_000 + i * 100).toISOString(),
          targets: [{ account_id: account }],
        },
      });
      expect(res.status).toBe(201);
    }
  h.clock.advance(60_000);
});
afterAll(() => h?.close());

const claim = (claimedBy: string, limit: number, busyAccounts: string[] = []) => {
  const now = h.clock.now();
  return claimDue(h.db, {
    now,
    leaseUntil: new Date(now.getTime() + 120_000),
    claimedBy,
    caps: { bluesky: limit },
    limit,
    busyAccounts,
  });
};

test("accounts publishing to another copy are passed over: a claim still fills its slots from the rest", async () => {
  const first = await claim("copy-a", 3);
  expect(first.map((t) => t.accountId)).toEqual(accounts.slice(0, 3));
  // Copy B knows nothing of A's publishes (its busy list is empty): the earliest due targets left belong
  // to A's accounts, whose next publish has to wait for A's result.
  const second = await claim("copy-b", 3);
  expect(second.map((t) => t.accountId)).toEqual(accounts.slice(3, 6));
});

test.skipIf(!pg)("accounts another claimer holds at that moment are passed over without taking a place", async () => {
  const holder = postgres(h.db.url!, { max: 1, onnotice: () => {} });
  try {
    await holder.begin(async (tx) => {
      // The same locks a claim takes (crier_claim step 1), held by a claim still in its transaction: the
      // four accounts due next.
      for (const account of accounts.slice(6, 10))
        await tx`select pg_advisory_xact_lock(7242032, hashtext(${account}::text))`;
      const meanwhile = await claim("copy-c", 2);
      expect(meanwhile.map((t) => t.accountId)).toEqual(accounts.slice(10, 12));
    });
    // Released: they go out next.
    const after = await claim("copy-c", 4, accounts.slice(10, 12));
    expect(after.map((t) => t.accountId)).toEqual(accounts.slice(6, 10));
  } finally {
    await holder.end();
  }
});
