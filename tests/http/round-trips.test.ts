import { afterAll, beforeAll, expect, test } from "bun:test";
import { storedBlueskyAccount } from "../support/stored-account.ts";
import { createHarness, type Harness } from "../support/harness.ts";

// The hot routes' statements per request, counted where drizzle sends them. A new query on these paths
// costs every client a round trip: raise a figure here only on purpose.
let h: Harness;
let token: string;
const accountIds: string[] = [];

beforeAll(async () => {
  h = await createHarness();
  const p = await h.profile();
  token = p.token;
  for (let i = 0; i < 3; i++) {
    accountIds.push(await storedBlueskyAccount(h.ctx, p.profileId, `rt${i}`));
  }
  // The first request of a key reads it; later ones find it in this copy's cache once LISTEN is up.
  for (let i = 0; i < 50 && (await counted(() => h.request("GET", "/v1/accounts", { token }))).length > 1; i++)
    await Bun.sleep(20);
});
afterAll(() => h.close());

async function counted(run: () => Promise<{ status: number }>): Promise<string[]> {
  const seen: string[] = [];
  h.db.observe((q) => seen.push(q));
  try {
    const res = await run();
    if (res.status >= 300) throw new Error(`status ${res.status}`);
  } finally {
    h.db.observe(undefined);
  }
  return seen;
}

test("GET /v1/accounts with a known key is one statement", async () => {
  expect((await counted(() => h.request("GET", "/v1/accounts", { token }))).length).toBe(1);
});

const postBody = (n: number) => ({
  content: "hello",
  publish_at: new Date(h.clock.now().getTime() + 86_400_000).toISOString(),
  targets: accountIds.slice(0, n).map((id) => ({ account_id: id })),
});

test("POST /v1/posts is one statement once its accounts are known to this copy, two before", async () => {
  const other = await h.profile();
  const fresh = await storedBlueskyAccount(h.ctx, other.profileId, "rt-fresh");
  const body = { content: "hello", targets: [{ account_id: fresh }] };
  // Warm the key of the new profile (GET) so only the post's statements are counted below.
  await counted(() => h.request("GET", "/v1/accounts", { token: other.token }));
  // The target accounts, then post and targets together; the accounts are remembered once LISTEN is up.
  const first = await counted(() => h.request("POST", "/v1/posts", { token: other.token, body }));
  expect(first.length).toBe(2);
  for (
    let i = 0;
    i < 50 && (await counted(() => h.request("POST", "/v1/posts", { token: other.token, body }))).length > 1;
    i++
  )
    await Bun.sleep(20);
  for (const n of [1, 3]) {
    await counted(() => h.request("POST", "/v1/posts", { token, body: postBody(n) }));
    const statements = await counted(() => h.request("POST", "/v1/posts", { token, body: postBody(n) }));
    expect({ targets: n, statements: statements.length }).toEqual({ targets: n, statements: 1 });
  }
});

test("a key unknown to the cache costs its lookup (and, at most once a minute, its last-use stamp) only once", async () => {
  const other = await h.profile();
  const first = await counted(() => h.request("GET", "/v1/accounts", { token: other.token }));
  // The key lookup, the key's last_used_at (shown in the dashboard; written at most once a minute), the list.
  expect(first.length).toBe(3);
  expect((await counted(() => h.request("GET", "/v1/accounts", { token: other.token }))).length).toBe(1);
});
