/**
 * A new post and its targets in one statement, so they commit together. Shared by the posts module and the
 * workflow engine (which creates posts for due workflow items without going through the module).
 */
import { sql } from "drizzle-orm";
import { preparedSql } from "./prepared.ts";

const p = (name: string) => sql.placeholder(name);

const targetsJson = sql`jsonb_to_recordset(${p("targets")}::text::jsonb) as x(id uuid, account_id uuid, platform text,
  target_variant text, position int, content_override text, platform_options jsonb)`;
const postColumns = sql`posts (id, profile_id, content, external_id, media, origin, publish_at, draft_id, workflow_id, created_at, updated_at)`;
const postValues = sql`${p("id")}::text::uuid, ${p("profileId")}::text::uuid, ${p("content")}::text, ${p("externalId")}::text,
  ${p("media")}::text::jsonb, ${p("origin")}::text, ${p("publishAt")}::text::timestamptz, ${p("draftId")}::text::uuid,
  ${p("workflowId")}::text::uuid, ${p("createdAt")}::text::timestamptz, ${p("updatedAt")}::text::timestamptz`;
const targetColumns = sql`post_targets (id, post_id, profile_id, account_id, platform, target_variant, position, content_override,
  platform_options, status, scheduled_time, due_at, created_at, updated_at)`;
const targetValues = sql`x.id, ${p("id")}::text::uuid, ${p("profileId")}::text::uuid, x.account_id, x.platform, x.target_variant,
  x.position, x.content_override, x.platform_options, ${p("status")}::text, ${p("scheduledTime")}::text::timestamptz,
  ${p("dueAt")}::text::timestamptz, ${p("targetsCreatedAt")}::text::timestamptz, ${p("targetsUpdatedAt")}::text::timestamptz`;

// Only for new targets (newRows): no error, lease, result or attempt yet, so those columns keep their defaults.
export const insertPostStatement = preparedSql(
  "crier_insert_post",
  sql`
  with p as (insert into ${postColumns} values (${postValues}))
  insert into ${targetColumns} select ${targetValues} from ${targetsJson}`,
);

/**
 * The same, for targets planned from accounts this copy remembered rather than read: the statement checks
 * that every target's account is still in the post's profile, on the same platform and not disconnected,
 * and stores nothing (answering created = 0) when one is not, so a stale memory can never create a target
 * the API would have refused. Checked and written in one snapshot, as a read followed by an insert was.
 */
export const insertCheckedPostStatement = preparedSql<{ created: number }>(
  "crier_insert_post_checked",
  sql`
  with x as (select * from ${targetsJson}),
  ok as (
    select not exists (
      select 1 from x left join accounts a on a.id = x.account_id and a.profile_id = ${p("profileId")}::text::uuid
        and a.platform = x.platform and a.status <> 'disconnected'
      where a.id is null) as ok
  ),
  p as (insert into ${postColumns} select ${postValues} where (select ok from ok) returning id),
  t as (insert into ${targetColumns} select ${targetValues} from x where exists (select 1 from p))
  select count(*)::int as created from p`,
);
