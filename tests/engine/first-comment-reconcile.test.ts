/**
 * First comments whose outcome is unknown, settled by the reconciler over the Bluesky emulator (whose
 * plugin can look a reply up, read-after-write): a 5xx on the comment's createRecord after the reply was
 * made → found, published with its id; before anything was made → proven absent, posted once more; the
 * feed unreadable → it stays unknown. The post stays published throughout; never a second reply.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { reconcileJob } from "../../src/engine/reconcile.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

const SETTLE_MS = 30_000;
let h: EngineHarness;
let token: string;
let accountId: string;

beforeAll(async () => {
  h = await engineHarness({ engine: { jobs: [reconcileJob], reconcileSettleMs: SETTLE_MS } });
  let profileId: string;
  ({ token, profileId } = await h.profile());
  accountId = await h.bluesky(profileId, "first.comment");
});
afterAll(() => h.close());

const replies = (text: string) => h.emulator.posts().filter((p) => p.text === text);
const target = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data.targets[0];

/** A post whose comment's createRecord (the second one) answers 503, after the work or before it. */
async function commentFailing(text: string, afterWork: boolean): Promise<string> {
  h.emulator.failNext({ kind: "server_error", on: "createRecord", skip: 1, afterWork });
  const res = await h.request("POST", "/v1/posts", {
    token,
    body: { content: `post of ${text}`, targets: [{ account_id: accountId, first_comment: text }] },
  });
  expect(res.status).toBe(201);
  await h.engine.runUntilIdle();
  const t = await target(res.body.data.id);
  expect(t.status).toBe("published");
  expect(t.first_comment).toMatchObject({ status: "unknown", error_code: "outcome_unknown" });
  expect(t.first_comment.error).toContain("look for it");
  return res.body.data.id;
}

async function afterSettle() {
  h.clock.advance(SETTLE_MS + 1000);
  await h.engine.runUntilIdle();
}

test("made before the error: found on the account and published with its id, not posted again", async () => {
  const text = `found ${crypto.randomUUID().slice(0, 8)}`;
  const id = await commentFailing(text, true);
  expect(replies(text)).toHaveLength(1);
  // Not before the settle delay.
  await h.engine.runUntilIdle();
  expect((await target(id)).first_comment.status).toBe("unknown");
  await afterSettle();
  const t = await target(id);
  expect(t.status).toBe("published");
  expect(t.first_comment).toMatchObject({
    status: "published",
    platform_comment_id: replies(text)[0].id,
    error: null,
    error_code: null,
  });
  expect(replies(text)).toHaveLength(1);
});

test("nothing made: proven absent, posted once more, and only once", async () => {
  const text = `absent ${crypto.randomUUID().slice(0, 8)}`;
  const id = await commentFailing(text, false);
  expect(replies(text)).toHaveLength(0);
  await afterSettle();
  const t = await target(id);
  expect(t.first_comment).toMatchObject({ status: "published" });
  expect(replies(text)).toHaveLength(1);
  expect(replies(text)[0].replyTo).toBe(t.platform_post_id);
  h.clock.advance(3_600_000);
  await h.engine.runUntilIdle();
  expect(replies(text)).toHaveLength(1);
});

test("the feed cannot be read: it stays unknown, says it could not tell, and is not posted", async () => {
  const text = `cannot tell ${crypto.randomUUID().slice(0, 8)}`;
  const id = await commentFailing(text, false);
  h.emulator.failNext({ kind: "server_error", on: "getAuthorFeed", times: 3 });
  await afterSettle();
  const t = await target(id);
  expect(t.status).toBe("published");
  expect(t.first_comment.status).toBe("unknown");
  expect(t.first_comment.error).toContain("could not tell");
  h.clock.advance(3_600_000);
  await h.engine.runUntilIdle();
  expect((await target(id)).first_comment.status).toBe("unknown");
  expect(replies(text)).toHaveLength(0);
});
