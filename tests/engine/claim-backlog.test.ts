/**
 * An account publishing already, with a backlog of due targets at the front of the queue, does not hold
 * back other accounts' due targets: the copy publishing it looks past the backlog as it reads the window.
 * (A copy that does not know the account is busy finds the window full of it and comes back short; the
 * copy that publishes it is the one that claims past it. Leaving every busy account out of every copy's
 * window cost more, with four copies, than the short claims it saved: bench/scale (d) 1.26-1.31 x one
 * copy's PostgreSQL CPU per target against 1.13-1.22 x.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { claimDue } from "../../src/engine/claim.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

let h: EngineHarness;
let busy: string;
let other: string;

beforeAll(async () => {
  h = await engineHarness();
  const { profileId, token } = await h.profile();
  busy = await h.bluesky(profileId, "claim-backlog-busy.test");
  other = await h.bluesky(profileId, "claim-backlog-other.test");
  // Twelve of the busy account's targets fall due first, then one of the other account's.
  for (const [i, account] of [...Array<string>(12).fill(busy), other].entries()) {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: `backlog ${i}`,
        publish_at: new Date(h.clock.now().getTime() + 1000 + i * 100).toISOString(),
        targets: [{ account_id: account }],
      },
    });
    expect(res.status).toBe(201);
  }
  h.clock.advance(60_000);
});
afterAll(() => h?.close());

const claim = (copy: string, cap: number, busyAccounts: string[]) => {
  const now = h.clock.now();
  return claimDue(h.db, {
    now,
    leaseUntil: new Date(now.getTime() + 60_000),
    claimedBy: copy,
    caps: { bluesky: cap },
    limit: cap,
    busyAccounts,
  });
};

test("a busy account's backlog at the front of the queue does not hold back another account's due target", async () => {
  // One copy takes the busy account's first target: it is publishing now.
  expect((await claim("copy-a", 1, [])).map((t) => t.accountId)).toEqual([busy]);
  // It asks for two more: its window (four times that) would be the busy account's next eight targets
  // alone; it looks past them.
  expect((await claim("copy-a", 2, [busy])).map((t) => t.accountId)).toEqual([other]);
});
