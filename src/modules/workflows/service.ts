import { and, eq, inArray, sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import type { Queryable } from "../../db/client.ts";
import { rowsOf } from "../../db/client.ts";
import {
  accounts,
  postTargets,
  profileLimits,
  profiles,
  workflowItems,
  workflows,
  workflowSources,
} from "../../db/schema.ts";
import { BadRequest, Forbidden, NotFound } from "../../http/errors.ts";
import { idempotent } from "../../http/idempotency.ts";
import { isoOrNull } from "../../http/model.ts";
import { pageOrder, pageWhere, toPage, type PageRequest } from "../../http/paging.ts";
import { CAPTION_PLATFORMS, withDefaults, type WorkflowSettings } from "../../domain/workflow-settings.ts";
import type { Workflow, WorkflowCreate, WorkflowItem, WorkflowListQuery, WorkflowPatch } from "./model.ts";
import { uuidArray } from "../../db/uuid-array.ts";

type WorkflowRow = typeof workflows.$inferSelect;
type AccountRow = typeof accounts.$inferSelect;

export function toWorkflow(r: WorkflowRow): Workflow {
  return {
    id: r.id,
    profile_id: r.profileId,
    name: r.name,
    description: r.description,
    source_account_id: r.sourceAccountId,
    target_account_ids: r.targetAccountIds,
    settings: r.settings as WorkflowSettings,
    is_active: r.isActive,
    future_content_enabled: r.futureContentEnabled,
    last_checked: isoOrNull(r.lastChecked),
    last_enabled_at: isoOrNull(r.lastEnabledAt),
    last_error: r.lastError,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

async function workflowRow(db: Queryable, profileId: string, id: string, lock = false): Promise<WorkflowRow> {
  const q = db
    .select()
    .from(workflows)
    .where(and(eq(workflows.id, id), eq(workflows.profileId, profileId)));
  const [row] = lock ? await q.for("update") : await q;
  if (!row) throw new NotFound("Workflow");
  return row;
}

// ---------------------------------------------------------------------------------------------------
// The checks of a whole workflow (create, and the merged result of a PATCH): each a 400 naming the field.

interface Shape {
  source_account_id: string;
  target_account_ids: string[];
  settings: WorkflowSettings;
}

const invalid = (
  field: string,
  problem: string,
  hint = "Fix the named field and send the request again; /openapi.json describes every field.",
) => new BadRequest("validation_error", `body.${field}: ${problem}`, hint);

async function checkAccounts(
  ctx: AppContext,
  db: Queryable,
  profileId: string,
  w: Shape,
): Promise<Map<string, AccountRow>> {
  const ids = [...new Set([w.source_account_id, ...w.target_account_ids])];
  const rows = await db
    .select()
    .from(accounts)
    .where(and(inArray(accounts.id, ids), eq(accounts.profileId, profileId)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const source = byId.get(w.source_account_id);
  if (!source)
    throw new BadRequest(
      "source_account_not_found",
      `source_account_id ${w.source_account_id}: no connected account with this id in this profile.`,
      "List your accounts with GET /v1/accounts.",
    );
  const plugin = ctx.platforms.get(source.platform);
  if (!plugin?.capabilities.source || !plugin.fetchRecent) {
    throw new BadRequest(
      "source_not_supported",
      `source_account_id: ${plugin?.displayName ?? source.platform} (${source.platform}) cannot be a workflow source: Crier cannot read its posts.`,
      "Pick a source account on a platform whose capabilities.source is true (GET /v1/accounts).",
    );
  }
  if (source.status === "disconnected")
    throw new BadRequest(
      "source_account_disconnected",
      `source_account_id: the ${source.platform} account @${source.username} is disconnected.`,
      "Connect it again first.",
    );
  w.target_account_ids.forEach((id, i) => {
    const a = byId.get(id);
    const field = `target_account_ids[${i}]`;
    if (id === w.source_account_id)
      throw new BadRequest(
        "target_is_source",
        `${field}: the source account cannot also be a destination.`,
        "Remove it from target_account_ids.",
      );
    if (!a)
      throw new BadRequest(
        "target_account_not_found",
        `${field} (${id}): no connected account with this id in this profile.`,
        "List your accounts with GET /v1/accounts.",
      );
    if (a.status !== "active")
      throw new BadRequest(
        "target_account_inactive",
        `${field}: the ${a.platform} account @${a.username} is ${a.status}.`,
        "Reconnect the account (POST /v1/accounts/connect/{platform}) or remove it.",
      );
    const p = ctx.platforms.get(a.platform);
    if (!p?.publish || !p.capabilities.destination || ctx.platforms.statusOf(a.platform) !== "implemented") {
      throw new BadRequest(
        "target_not_destination",
        `${field}: Crier cannot publish to ${a.platform} accounts.`,
        "Remove it from target_account_ids.",
      );
    }
  });
  return byId;
}

const PLATFORM_BLOCKS = ["snapchat", "threads", "instagram", "reddit"] as const;

function checkSettings(ctx: AppContext, w: Shape, byId: Map<string, AccountRow>) {
  for (const [key, d] of Object.entries(w.settings.destination_publish_settings ?? {})) {
    const field = `settings.destination_publish_settings.${key}`;
    if (!w.target_account_ids.includes(key))
      throw invalid(field, "is not one of target_account_ids; settings are keyed by a destination account id.");
    const platform = byId.get(key)!.platform;
    const captionPlatform = (CAPTION_PLATFORMS as readonly string[]).includes(platform);
    for (const opt of ["caption_ending", "remove_comment_dm_prompts", "adapt_caption"] as const) {
      const set =
        opt === "caption_ending" ? d.caption_ending !== undefined && d.caption_ending !== "" : d[opt] === true;
      if (set && !captionPlatform)
        throw invalid(
          `${field}.${opt}`,
          `is not available for ${platform} destinations (only ${CAPTION_PLATFORMS.join(", ")}).`,
        );
    }
    if (d.adapt_caption && !ctx.config.ai) {
      throw invalid(
        `${field}.adapt_caption`,
        "needs an AI endpoint, and this server has none configured.",
        "Set AI_BASE_URL and AI_MODEL (and AI_API_KEY if the endpoint needs one) on the server, or leave adapt_caption false.",
      );
    }
    for (const block of PLATFORM_BLOCKS) {
      if (d[block] && platform !== block)
        throw invalid(`${field}.${block}`, `applies to ${block} destinations; this one is ${platform}.`);
    }
  }
  for (const id of w.target_account_ids) {
    if (byId.get(id)!.platform === "reddit" && !w.settings.destination_publish_settings?.[id]?.reddit) {
      throw invalid(
        `settings.destination_publish_settings.${id}.reddit`,
        "is required for a Reddit destination (at least the subreddit).",
      );
    }
  }
}

async function checkLimit(db: Queryable, profileId: string) {
  // The profile row lock serialises creates of one profile, so two at once cannot both pass the count.
  await db.select({ id: profiles.id }).from(profiles).where(eq(profiles.id, profileId)).for("update");
  const [limit] = await db.select().from(profileLimits).where(eq(profileLimits.profileId, profileId));
  if (limit?.workflows == null) return;
  const [{ n }] = rowsOf<{ n: number }>(
    await db.execute(sql`select count(*)::int as n from workflows where profile_id = ${profileId}::uuid`),
  );
  if (n >= limit.workflows) {
    throw new Forbidden(
      "workflow_limit_reached",
      `This profile has reached its maximum of ${limit.workflows} workflow${limit.workflows === 1 ? "" : "s"}.`,
      "Delete a workflow, or ask the operator to raise the limit (crier profiles set-limits PROFILE_ID --workflows N).",
    );
  }
}

export async function createWorkflow(ctx: AppContext, profileId: string, body: WorkflowCreate, key?: string) {
  const settings = withDefaults(body.settings);
  const create = async (q: Queryable, id: string) => {
    const shape = { source_account_id: body.source_account_id, target_account_ids: body.target_account_ids, settings };
    await checkLimit(q, profileId);
    checkSettings(ctx, shape, await checkAccounts(ctx, q, profileId, shape));
    const now = ctx.clock.now();
    const [row] = await q
      .insert(workflows)
      .values({
        id,
        profileId,
        name: body.name,
        description: body.description ?? null,
        sourceAccountId: body.source_account_id,
        targetAccountIds: body.target_account_ids,
        settings,
        isActive: body.is_active,
        futureContentEnabled: body.future_content_enabled ?? true,
        lastEnabledAt: body.is_active ? now : null,
        pollDueAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return toWorkflow(row);
  };
  return idempotent(ctx.db.db, { profileId, operation: "workflows.create", key, body }, create, (id) =>
    getWorkflow(ctx, profileId, id),
  );
}

export async function getWorkflow(ctx: AppContext, profileId: string, id: string): Promise<Workflow> {
  return toWorkflow(await workflowRow(ctx.db.db, profileId, id));
}

export async function listWorkflows(ctx: AppContext, profileId: string, q: WorkflowListQuery) {
  const rows = await ctx.db.db
    .select()
    .from(workflows)
    .where(and(eq(workflows.profileId, profileId), pageWhere(workflows, q)))
    .orderBy(...pageOrder(workflows))
    .limit((q.limit ?? 20) + 1);
  const page = toPage(rows, q);
  return { data: page.items.map(toWorkflow), meta: page.meta };
}

/** Queued (not yet posted) items of a workflow, optionally only those of destinations no longer targeted. */
async function dropQueued(q: Queryable, workflowId: string, keepAccounts?: string[]) {
  await q.execute(sql`delete from workflow_items where workflow_id = ${workflowId}::uuid and status = 'queued'
    ${keepAccounts ? sql`and not (account_id = any(${uuidArray(keepAccounts)}::uuid[]))` : sql``}`);
}

export async function updateWorkflow(
  ctx: AppContext,
  profileId: string,
  id: string,
  patch: WorkflowPatch,
): Promise<Workflow> {
  return ctx.db.db.transaction(async (tx) => {
    const row = await workflowRow(tx, profileId, id, true);
    const shape = {
      source_account_id: patch.source_account_id ?? row.sourceAccountId,
      target_account_ids: patch.target_account_ids ?? row.targetAccountIds,
      settings: patch.settings ? withDefaults(patch.settings) : (row.settings as WorkflowSettings),
    };
    checkSettings(ctx, shape, await checkAccounts(ctx, tx, profileId, shape));
    const now = new Date(Math.max(ctx.clock.now().getTime(), row.updatedAt.getTime() + 1));
    const isActive = patch.is_active ?? row.isActive;
    const enabling = isActive && !row.isActive;
    if (!isActive && row.isActive) await dropQueued(tx, id);
    else if (patch.target_account_ids) await dropQueued(tx, id, shape.target_account_ids);
    const [updated] = await tx
      .update(workflows)
      .set({
        name: patch.name ?? row.name,
        description: patch.description !== undefined ? patch.description : row.description,
        sourceAccountId: shape.source_account_id,
        targetAccountIds: shape.target_account_ids,
        settings: shape.settings,
        isActive,
        futureContentEnabled: patch.future_content_enabled ?? row.futureContentEnabled,
        // Turned on again: what the source published while it was off is history, not copied.
        ...(enabling && { lastEnabledAt: ctx.clock.now(), pollDueAt: ctx.clock.now() }),
        ...(patch.source_account_id &&
          patch.source_account_id !== row.sourceAccountId && {
            lastChecked: null,
            lastEnabledAt: isActive ? ctx.clock.now() : null,
            pollDueAt: ctx.clock.now(),
          }),
        updatedAt: now,
      })
      .where(eq(workflows.id, id))
      .returning();
    return toWorkflow(updated);
  });
}

export async function deleteWorkflow(ctx: AppContext, profileId: string, id: string) {
  await ctx.db.db.transaction(async (tx) => {
    await workflowRow(tx, profileId, id, true);
    // Items cascade with the workflow; posts already created from it stay (posts.workflow_id is no foreign key).
    await tx.delete(workflows).where(eq(workflows.id, id));
  });
  return {
    deleted: true,
    id,
    provider_revocation_required: null,
    provider_revocation_url: null,
    message: "The workflow and its queued items are deleted; posts it already created stay.",
  };
}

// ---------------------------------------------------------------------------------------------------
// What a workflow did

export async function itemsBySource(ctx: AppContext, sourceIds: string[]): Promise<WorkflowItem[]> {
  if (!sourceIds.length) return [];
  const sources = await ctx.db.db.select().from(workflowSources).where(inArray(workflowSources.id, sourceIds));
  const dests = await ctx.db.db
    .select({
      i: workflowItems,
      platform: accounts.platform,
      tStatus: postTargets.status,
      tError: postTargets.error,
      tCode: postTargets.errorCode,
    })
    .from(workflowItems)
    .leftJoin(accounts, eq(accounts.id, workflowItems.accountId))
    .leftJoin(postTargets, eq(postTargets.postId, workflowItems.postId))
    .where(inArray(workflowItems.sourceId, sourceIds))
    .orderBy(workflowItems.createdAt, workflowItems.id);
  const order = new Map(sourceIds.map((id, i) => [id, i]));
  // Destinations in the workflow's order of target_account_ids.
  const targets = sources.length
    ? ((
        await ctx.db.db
          .select({ ids: workflows.targetAccountIds })
          .from(workflows)
          .where(eq(workflows.id, sources[0].workflowId))
      )[0]?.ids ?? [])
    : [];
  const rank = (accountId: string) => targets.indexOf(accountId) + 1 || Infinity;
  dests.sort((a, b) => rank(a.i.accountId) - rank(b.i.accountId));
  return sources
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    .map((s) => ({
      id: s.id,
      source_item_id: s.sourceItemId,
      source_url: s.sourceUrl,
      kind: s.kind,
      published_at: s.publishedAt.toISOString(),
      created_at: s.createdAt.toISOString(),
      updated_at: s.updatedAt.toISOString(),
      destinations: dests
        .filter((d) => d.i.sourceId === s.id)
        // A posted item whose post then failed reads as failed, with the post's reason.
        .map((d) =>
          d.tStatus === "failed"
            ? { ...d, status: "failed" as const, code: d.tCode, reason: d.tError }
            : { ...d, status: d.i.status, code: d.i.reasonCode, reason: d.i.reason },
        )
        .filter((d, i, all) => all.findIndex((x) => x.i.id === d.i.id) === i)
        .map((d) => ({
          account_id: d.i.accountId,
          platform: d.platform,
          status: d.status,
          slot_at: isoOrNull(d.i.slotAt),
          reason_code: d.code,
          reason: d.reason,
          caption: d.i.caption,
          post_id: d.i.postId,
        })),
    }));
}

export async function listItems(ctx: AppContext, profileId: string, id: string, q: PageRequest) {
  await workflowRow(ctx.db.db, profileId, id);
  const rows = await ctx.db.db
    .select()
    .from(workflowSources)
    .where(and(eq(workflowSources.workflowId, id), pageWhere(workflowSources, q)))
    .orderBy(...pageOrder(workflowSources))
    .limit((q.limit ?? 20) + 1);
  const page = toPage(rows, q);
  return {
    data: await itemsBySource(
      ctx,
      page.items.map((r) => r.id),
    ),
    meta: page.meta,
  };
}

export async function setWorkflowLimit(db: Queryable, profileId: string, limit: number | null) {
  const [p] = await db.select({ id: profiles.id }).from(profiles).where(eq(profiles.id, profileId));
  if (!p) throw new Error(`no profile with id ${profileId}`);
  await db
    .insert(profileLimits)
    .values({ profileId, workflows: limit })
    .onConflictDoUpdate({ target: profileLimits.profileId, set: { workflows: limit, updatedAt: sql`now()` } });
  return { profile_id: profileId, workflows: limit === null ? "unlimited" : limit };
}
