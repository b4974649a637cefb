/**
 * A new post and its targets in one statement, so they commit together. Shared by the posts module and the
 * workflow engine (which creates posts for due workflow items without going through the module).
 */
import { sql } from "drizzle-orm";
import { preparedSql } from "./prepared.ts";

const p = (name: string) => sql.placeholder(name);
// Only for new targets (newRows): no error, lease, result or attempt yet, so those columns keep their defaults.
export const insertPostStatement = preparedSql(
  "crier_insert_post",
  sql`
  with p as (
    insert into posts (id, profile_id, content, external_id, media, origin, publish_at, draft_id, workflow_id, created_at, updated_at)
    values (${p("id")}::text::uuid, ${p("profileId")}::text::uuid, ${p("content")}::text, ${p("externalId")}::text, ${p("media")}::text::jsonb,
      ${p("origin")}::text, ${p("publishAt")}::text::timestamptz, ${p("draftId")}::text::uuid, ${p("workflowId")}::text::uuid,
      ${p("createdAt")}::text::timestamptz, ${p("updatedAt")}::text::timestamptz)
  )
  insert into post_targets (id, post_id, profile_id, account_id, platform, target_variant, position, content_override, platform_options,
    status, scheduled_time, due_at, created_at, updated_at)
  select x.id, ${p("id")}::text::uuid, ${p("profileId")}::text::uuid, x.account_id, x.platform, x.target_variant, x.position,
    x.content_override, x.platform_options, ${p("status")}::text, ${p("scheduledTime")}::text::timestamptz, ${p("dueAt")}::text::timestamptz,
    ${p("targetsCreatedAt")}::text::timestamptz, ${p("targetsUpdatedAt")}::text::timestamptz
  from jsonb_to_recordset(${p("targets")}::text::jsonb) as x(id uuid, account_id uuid, platform text, target_variant text, position int,
    content_override text, platform_options jsonb)`,
);
