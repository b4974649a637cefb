import { sql, type SQL } from "drizzle-orm";

/**
 * The SQL twin of postStatus() (src/domain/status.ts), so lists can filter on the derived status in
 * the database and page correctly. tests/domain/status.test.ts checks both agree on every combination.
 * `postId` is the SQL expression of the post's id (e.g. posts.id).
 */
export function postStatusSql(postId: SQL | unknown): SQL<string> {
  const n = (cond: SQL) => sql`count(*) filter (where ${cond})`;
  const live = n(sql`pt.status <> 'cancelled'`);
  const active = n(sql`pt.status in ('processing', 'submitted')`);
  const waiting = n(sql`pt.status in ('pending', 'scheduled')`);
  const pending = n(sql`pt.status = 'pending'`);
  const published = n(sql`pt.status = 'published'`);
  return sql<string>`(select case
    when ${live} = 0 then 'cancelled'
    when ${active} > 0 then 'processing'
    when ${waiting} = ${live} then case when ${pending} > 0 then 'queued' else 'scheduled' end
    when ${waiting} > 0 then 'processing'
    when ${published} = ${live} then 'published'
    when ${published} = 0 then 'failed'
    else 'partial' end
    from post_targets pt where pt.post_id = ${postId})`;
}
