import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { postStatus, TARGET_STATUSES, type PostStatus, type TargetStatus } from "../../src/domain/status.ts";
import { posts, postTargets } from "../../src/db/schema.ts";
import { postStatusSql } from "../../src/modules/posts/status-sql.ts";
import { createHarness, type Harness } from "../support/harness.ts";

/** Every multiset of target states of size 1..n (order never matters to the rule). */
function combinations(n: number): TargetStatus[][] {
  const out: TargetStatus[][] = [];
  const grow = (prefix: TargetStatus[], from: number) => {
    if (prefix.length) out.push(prefix);
    if (prefix.length === n) return;
    for (let i = from; i < TARGET_STATUSES.length; i++) grow([...prefix, TARGET_STATUSES[i]], i);
  };
  grow([], 0);
  return out;
}

/** The rule of docs/architecture.md, written out independently of the implementation, for the oracle. */
function expected(states: TargetStatus[]): PostStatus {
  const live = states.filter((s) => s !== "cancelled");
  if (!live.length) return "cancelled";
  const waiting = (s: TargetStatus) => s === "pending" || s === "scheduled";
  const finished = (s: TargetStatus) => ["published", "failed", "skipped"].includes(s);
  if (live.some((s) => s === "processing" || s === "submitted")) return "processing";
  if (live.every(waiting)) return live.includes("pending") ? "queued" : "scheduled";
  if (live.some(waiting) && live.some(finished)) return "processing";
  const pub = live.filter((s) => s === "published").length;
  return pub === live.length ? "published" : pub === 0 ? "failed" : "partial";
}

describe("post status derived from targets", () => {
  const all = combinations(4);

  test("covers every combination of up to four targets (494 multisets)", () => {
    expect(all.length).toBe(8 + 36 + 120 + 330);
    for (const states of all) expect(`${states}: ${postStatus(states)}`).toBe(`${states}: ${expected(states)}`);
  });

  test("order of targets does not matter", () => {
    for (const states of all) expect(postStatus([...states].reverse())).toBe(postStatus(states));
  });

  test("named cases of the rule", () => {
    expect(postStatus(["cancelled", "cancelled"])).toBe("cancelled");
    expect(postStatus(["pending", "scheduled"])).toBe("queued");
    expect(postStatus(["scheduled", "scheduled"])).toBe("scheduled");
    expect(postStatus(["scheduled", "cancelled"])).toBe("scheduled");
    expect(postStatus(["published", "scheduled"])).toBe("processing");
    expect(postStatus(["published", "submitted"])).toBe("processing");
    expect(postStatus(["published", "cancelled"])).toBe("published");
    expect(postStatus(["published", "failed"])).toBe("partial");
    expect(postStatus(["published", "skipped"])).toBe("partial");
    expect(postStatus(["failed", "skipped", "cancelled"])).toBe("failed");
  });
});

describe("the SQL twin used by list filters agrees with postStatus", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  test("on every combination of up to three targets", async () => {
    const { profileId } = await h.profile();
    const cases = combinations(3);
    const ids: string[] = [];
    for (const states of cases) {
      const [p] = await h.db.db
        .insert(posts)
        .values({ profileId, content: states.join(",") })
        .returning({ id: posts.id });
      ids.push(p.id);
      await h.db.db
        .insert(postTargets)
        .values(states.map((status, position) => ({ postId: p.id, profileId, platform: "bluesky", status, position })));
    }
    const rows = await h.db.rows<{ id: string; status: string }>(
      sql`select p.id, ${postStatusSql(sql`p.id`)} as status from posts p`,
    );
    const byId = new Map(rows.map((r) => [r.id, r.status]));
    cases.forEach((states, i) => expect(`${states}: ${byId.get(ids[i])}`).toBe(`${states}: ${postStatus(states)}`));
  });
});
