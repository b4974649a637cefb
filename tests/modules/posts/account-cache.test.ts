import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// A create plans from the accounts this copy remembers (src/modules/accounts/target-accounts.ts). Here the
// accounts change in another connection and the notification that would make this copy forget them never
// comes (the trigger is dropped, as if it were late or lost): the insert itself must refuse, and the client
// must get the same 400 as when the change is known, with nothing stored.
let h: Harness;
let token: string;
let profileId: string;
let otherProfileId: string;
let bsky: string;
let n = 0;

/** A statement run on a connection of its own where there can be one (PostgreSQL); PGlite has one only. */
async function elsewhere(statement: string) {
  const url = (h.db as { url?: string }).url;
  if (!url) return h.db.rows(sql.raw(statement));
  const other = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await other.unsafe(statement);
  } finally {
    await other.end();
  }
}

const connect = async (profile: string) =>
  (
    await upsertConnectedAccount(h.ctx, {
      profileId: profile,
      platform: "bluesky",
      remoteId: `did:plc:cache${++n}`,
      username: `cache${n}.test`,
      credentials: { did: `did:plc:cache${n}`, accessJwt: "a", refreshJwt: "r" },
    })
  ).id;

async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  h.db.observe((q) => seen.push(q));
  try {
    await run();
  } finally {
    h.db.observe(undefined);
  }
  return seen;
}

const create = (targets: string[]) =>
  h.request("POST", "/v1/posts", {
    token,
    body: { content: "x", targets: targets.map((account_id) => ({ account_id })) },
  });

const count = async (table: string) =>
  (await h.db.rows<{ n: number }>(sql.raw(`select count(*)::int as n from ${table}`)))[0].n;

beforeAll(async () => {
  h = await postsHarness();
  ({ token, profileId } = await h.profile());
  otherProfileId = (await h.profile()).profileId;
  bsky = await connect(profileId);
  await elsewhere("drop trigger crier_account_changed on accounts");
});
afterAll(() => h.close());

/** Creates posts on the account until this copy remembers it (one statement a create). */
async function remembered(id: string) {
  for (let i = 0; i < 50; i++) {
    const statements = await statementsOf(async () => expect((await create([bsky, id])).status).toBe(201));
    if (statements.length === 1) return;
    await Bun.sleep(20);
  }
  throw new Error("the account was never remembered");
}

for (const [change, statement, code] of [
  [
    "disconnected",
    "update accounts set status = 'disconnected', credentials = null where id = $1",
    "target_account_disconnected",
  ],
  ["deleted", "delete from accounts where id = $1", "target_account_not_found"],
  ["moved to another profile", "update accounts set profile_id = $2 where id = $1", "target_account_not_found"],
] as const) {
  test(`an account ${change} in another connection, unknown to this copy: the same 400 ${code}, nothing stored`, async () => {
    const id = await connect(profileId);
    await remembered(id);
    await elsewhere(statement.replace("$1", `'${id}'`).replace("$2", `'${otherProfileId}'`));
    const posts = await count("posts");
    const targets = await count("post_targets");
    let res: Awaited<ReturnType<typeof create>> | undefined;
    const statements = await statementsOf(async () => (res = await create([bsky, id])));
    // The remembered account was used (the insert came first) and the insert refused it.
    expect(statements[0]).toContain("insert into posts");
    expect(res!.status).toBe(400);
    expect(res!.body.error.code).toBe(code);
    expect(res!.body.error.message).toContain(`targets[1] (account ${id}`);
    expect({ posts: await count("posts"), targets: await count("post_targets") }).toEqual({ posts, targets });
    // And the next create reads the account instead of trusting the memory again.
    const again = await statementsOf(async () => expect((await create([bsky, id])).body.error.code).toBe(code));
    expect(again[0]).not.toContain("insert into posts");
  });
}

test("with an Idempotency-Key the refusal stores no key either: the same key then works once the account is back", async () => {
  const id = await connect(profileId);
  await remembered(id);
  await elsewhere(`update accounts set status = 'disconnected' where id = '${id}'`);
  const body = { content: "x", targets: [{ account_id: id }] };
  const headers = { "idempotency-key": "stale-cache-1" };
  const refused = await h.request("POST", "/v1/posts", { token, body, headers });
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe("target_account_disconnected");
  await elsewhere(`update accounts set status = 'active' where id = '${id}'`);
  const ok = await h.request("POST", "/v1/posts", { token, body, headers });
  expect(ok.status).toBe(201);
  expect(ok.headers.get("idempotent-replayed")).toBeNull();
});

test("posts created at the same moment share one statement, and one refused among them fails alone", async () => {
  const id = await connect(profileId);
  await remembered(id);
  await elsewhere(`update accounts set status = 'disconnected', credentials = null where id = '${id}'`);
  const posts = await count("posts");
  let results: Awaited<ReturnType<typeof create>>[] = [];
  const statements = await statementsOf(async () => {
    results = await Promise.all([create([bsky]), create([bsky, id]), create([bsky]), create([bsky]), create([bsky])]);
  });
  expect(results.map((r) => r.status)).toEqual([201, 400, 201, 201, 201]);
  expect(results[1].body.error.code).toBe("target_account_disconnected");
  expect(await count("posts")).toBe(posts + 4);
  // All five inserts went in one statement; the refused post then read its accounts afresh.
  expect(statements.filter((s) => s.includes("insert into posts")).length).toBe(1);
});
