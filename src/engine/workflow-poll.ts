/**
 * One poll of a workflow's source account: read what is new through the source plugin's fetchRecent,
 * take each source post once (unique on workflow + source item id), and queue it per destination with
 * its caption, media and slot, or record why it was skipped. The caller holds the workflow's lease.
 */
import { eq, sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { rowsOf } from "../db/client.ts";
import { accounts, profiles, workflows } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { checkTarget } from "../platform/host/content-check.ts";
import { ownMediaOf, withOwnNumbers } from "../media/own.ts";
import { providerFor } from "../platform/host/provider.ts";
import {
  RefreshError,
  type FailureOutcome,
  type MediaItem,
  type Plugin,
  type PluginContext,
  type RecentMedia,
  type RecentPost,
} from "../platform/sdk.ts";
import type { DestinationSettings, WorkflowSettings } from "../domain/workflow-settings.ts";
import { buildCaption } from "./captions.ts";
import { filterSkip } from "./workflow-filters.ts";
import { uuidArray } from "../db/uuid-array.ts";

type WorkflowRow = typeof workflows.$inferSelect;
type AccountRow = typeof accounts.$inferSelect;

export interface PollResult {
  ok: boolean;
  /** Source posts read that are newer than last_enabled_at. */
  found: number;
  /** workflow_sources ids this poll took. */
  taken: string[];
  error?: string;
}

/**
 * Posts published just before the previous poll may show up in the source's listing a little late
 * (indexing, clock skew): each poll reads back this far before last_checked. Taking is idempotent.
 */
const OVERLAP_MS = 10 * 60_000;

/** Reads the source; auth failures get one refresh, and a refusal marks the source account auth_required. */
async function readSource(
  ctx: AppContext,
  wf: WorkflowRow,
  source: AccountRow,
  sandbox: boolean,
): Promise<RecentPost[]> {
  const { plugin, context } = providerFor(ctx, source, { sandbox });
  if (!plugin.fetchRecent) throw new Error(`${plugin.displayName} cannot be read as a workflow source.`);
  // The plugin reports a failed read as an exception; the HTTP client's classification says which kind.
  let failure = undefined as FailureOutcome | undefined;
  const http = context.http;
  context.http = Object.assign(Object.create(http), {
    async request(...args: Parameters<typeof http.request>) {
      const res = await http.request(...args);
      if (!res.ok) failure = res.outcome;
      return res;
    },
  });
  const lastChecked = wf.lastChecked ? wf.lastChecked.getTime() - OVERLAP_MS : 0;
  const since = new Date(Math.max(wf.lastEnabledAt!.getTime(), lastChecked));
  const read = () => plugin.fetchRecent!(context, since);
  try {
    return await read();
  } catch (e) {
    if (failure?.kind !== "auth_expired") throw e;
    if (await refreshed(plugin, context)) {
      failure = undefined;
      try {
        return await read();
      } catch (again) {
        if ((failure as FailureOutcome | undefined)?.kind !== "auth_expired") throw again;
      }
    }
    await ctx.db.db
      .update(accounts)
      .set({ status: "auth_required", updatedAt: ctx.clock.now() })
      .where(eq(accounts.id, source.id));
    throw new Error(`The source account @${source.username} needs to be reconnected: ${(e as Error).message}`);
  }
}

async function refreshed(plugin: Plugin, context: PluginContext): Promise<boolean> {
  if (!plugin.refresh) return false;
  try {
    await plugin.refresh(context);
    return true;
  } catch (e) {
    if (e instanceof RefreshError && e.retryable) throw e;
    return false;
  }
}

interface Destination {
  account: AccountRow;
  plugin: Plugin | undefined;
  settings: DestinationSettings | undefined;
}

interface Planned {
  accountId: string;
  status: "queued" | "skipped";
  reasonCode: string | null;
  reason: string | null;
  caption: string | null;
  media: MediaItem[];
  options: Record<string, unknown> | null;
  intervalMs: number;
}

/** What the destination's platform_options are, from its workflow settings (Snapchat, Reddit). */
function optionsFor(platform: string, s: DestinationSettings | undefined): Record<string, unknown> | null {
  if (platform === "snapchat" && s?.snapchat)
    return { placements: s.snapchat.publish_targets, locale: s.snapchat.locale };
  if (platform === "reddit" && s?.reddit) {
    const { post_type, ...rest } = s.reddit;
    return { ...rest, postType: post_type };
  }
  if (platform === "instagram" && s?.instagram?.publish_as_trial_reel) return { trial_reel: true };
  return null;
}

/** The source's media as the destination's post carries it (by URL, fetched through the media guard at publish). */
function mediaFor(platform: string, media: RecentMedia[], settings: WorkflowSettings): MediaItem[] {
  const files = media.map(({ downloadable: _, ...m }): MediaItem => m);
  if (platform !== "tiktok" || settings.platform_settings?.tiktok?.keep_source_thumbnail !== false) return files;
  return files.map(({ thumbnail_url: _, ...m }) => m);
}

/** Why the source's media cannot be carried, when a media item is a page or a stand-in rather than the file. */
function notDownloadable(post: RecentPost, sourcePlatform: string): string | null {
  const page = post.media.find((m) => !m.downloadable);
  if (!page) return null;
  return `The source post's ${page.type} cannot be copied: ${sourcePlatform} gives only ${page.url}, not the file itself.`;
}

async function plan(
  ctx: AppContext,
  settings: WorkflowSettings,
  post: RecentPost,
  dest: Destination,
  ownOutput: boolean,
  sourcePlatform: string,
): Promise<Planned> {
  const base = {
    accountId: dest.account.id,
    caption: null,
    media: [],
    options: null,
    intervalMs: (dest.settings?.minimum_interval_minutes ?? 0) * 60_000,
  };
  if (ownOutput) {
    return {
      ...base,
      status: "skipped",
      reasonCode: "workflow_output",
      reason: "This source post was created by a Crier workflow; workflow output is never copied again (no loops).",
    };
  }
  const skip = filterSkip(post, settings);
  if (skip) return { ...base, status: "skipped", reasonCode: skip.code, reason: skip.reason };
  // Posting the text without its video would be a different post: the item is skipped, not trimmed.
  const page = notDownloadable(post, sourcePlatform);
  if (page) return { ...base, status: "skipped", reasonCode: "media_not_downloadable", reason: page };
  const plugin = dest.plugin;
  if (!plugin?.publish || !plugin.capabilities.destination) {
    return {
      ...base,
      status: "skipped",
      reasonCode: "platform_not_supported",
      reason: `Crier cannot publish to ${dest.account.platform}.`,
    };
  }
  // A source that points at Crier's own media (another workflow's upload) is checked with the file's numbers.
  const picked = mediaFor(dest.account.platform, post.media, settings);
  const own = await ownMediaOf(
    { db: ctx.db.db, storage: ctx.storage },
    dest.account.profileId,
    picked.map((m) => m.url),
  );
  const { items: media, facts: mediaFacts } = withOwnNumbers(picked, own);
  const limit =
    media.length && plugin.textLimit.withMediaMax !== undefined
      ? Math.min(plugin.textLimit.max, plugin.textLimit.withMediaMax)
      : plugin.textLimit.max;
  const caption = await buildCaption({
    text: post.content,
    platform: dest.account.platform,
    settings: dest.settings,
    limit: { max: limit, unit: plugin.textLimit.unit },
    ai: ctx.config.ai,
    log: ctx.log.child({ component: "workflow-caption", account_id: dest.account.id }),
  });
  const options = optionsFor(dest.account.platform, dest.settings);
  try {
    checkTarget({
      label: `destination ${dest.account.id} (${dest.account.platform})`,
      accountId: dest.account.id,
      plugin,
      content: caption,
      media,
      mediaFacts,
      options: options ?? {},
    });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { ...base, status: "skipped", reasonCode: e.errorCode, reason: e.message, caption };
  }
  // The post keeps its media in the API's shape (MediaInput: no mime_type); the check above had the type.
  return {
    ...base,
    status: "queued",
    reasonCode: null,
    reason: null,
    caption,
    media: media.map(({ mime_type: _, ...m }) => m),
    options,
  };
}

/** Source post ids on the source account that a workflow published (never copied again). */
async function workflowOutput(ctx: AppContext, sourceAccountId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = rowsOf<{ id: string }>(
    await ctx.db.db.execute(sql`
    select t.platform_post_id as id from post_targets t join posts p on p.id = t.post_id
    where t.account_id = ${sourceAccountId}::uuid and p.origin = 'workflow'
      and t.platform_post_id = any(${`{${ids.map((i) => `"${i.replace(/["\\]/g, "\\$&")}"`).join(",")}}`}::text[])`),
  );
  return new Set(rows.map((r) => r.id));
}

async function alreadyTaken(ctx: AppContext, workflowId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = rowsOf<{ id: string }>(
    await ctx.db.db.execute(sql`
    select source_item_id as id from workflow_sources where workflow_id = ${workflowId}::uuid
      and source_item_id = any(${`{${ids.map((i) => `"${i.replace(/["\\]/g, "\\$&")}"`).join(",")}}`}::text[])`),
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Takes one source post: inserts it (nothing happens when it was taken already, by an earlier poll or
 * another copy) and its destination items, each queued item on the earliest slot after its
 * destination's previous one. The workflow row is locked so two takers never compute the same slot.
 */
async function take(ctx: AppContext, wf: WorkflowRow, post: RecentPost, planned: Planned[]): Promise<string | null> {
  const now = ctx.clock.now();
  return ctx.db.db.transaction(async (tx) => {
    await tx.execute(sql`select id from workflows where id = ${wf.id}::uuid for update`);
    const inserted = rowsOf<{ id: string }>(
      await tx.execute(sql`
      insert into workflow_sources (workflow_id, source_item_id, source_url, kind, content, published_at, created_at, updated_at)
      values (${wf.id}::uuid, ${post.platformPostId}, ${post.url}, ${post.kind}, ${post.content}, ${post.createdAt.toISOString()}::timestamptz,
        ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)
      on conflict (workflow_id, source_item_id) do nothing returning id`),
    );
    if (!inserted.length) return null;
    const sourceId = inserted[0].id;
    for (const p of planned) {
      let slot: Date | null = null;
      if (p.status === "queued") {
        slot = now;
        if (p.intervalMs > 0) {
          const [last] = rowsOf<{ at: string | Date | null }>(
            await tx.execute(sql`
            select max(slot_at) as at from workflow_items
            where workflow_id = ${wf.id}::uuid and account_id = ${p.accountId}::uuid and status in ('queued', 'posted')`),
          );
          if (last?.at) slot = new Date(Math.max(now.getTime(), new Date(last.at).getTime() + p.intervalMs));
        }
      }
      await tx.execute(sql`
        insert into workflow_items (source_id, workflow_id, profile_id, account_id, status, reason, reason_code, slot_at, caption, media, platform_options, created_at, updated_at)
        values (${sourceId}::uuid, ${wf.id}::uuid, ${wf.profileId}::uuid, ${p.accountId}::uuid, ${p.status}, ${p.reason}, ${p.reasonCode},
          ${slot?.toISOString() ?? null}::timestamptz, ${p.caption}, ${JSON.stringify(p.media)}::jsonb, ${p.options ? JSON.stringify(p.options) : null}::jsonb,
          ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)`);
    }
    return sourceId;
  });
}

/** Polls one workflow whose lease the caller holds. Never throws for a source that cannot be read: ok is false. */
export async function pollWorkflow(ctx: AppContext, wf: WorkflowRow): Promise<PollResult> {
  const [src] = await ctx.db.db
    .select({ account: accounts, sandbox: profiles.sandbox })
    .from(accounts)
    .innerJoin(profiles, eq(profiles.id, accounts.profileId))
    .where(eq(accounts.id, wf.sourceAccountId));
  if (!src || src.account.status !== "active" || !src.account.credentials) {
    return {
      ok: false,
      found: 0,
      taken: [],
      error: `The source account is ${src?.account.status ?? "gone"}: reconnect it to resume this workflow.`,
    };
  }
  let recent: RecentPost[];
  try {
    recent = await readSource(ctx, wf, src.account, src.sandbox);
  } catch (e) {
    return {
      ok: false,
      found: 0,
      taken: [],
      error: `Reading the source failed; the next poll catches up: ${(e as Error)?.message ?? String(e)}`,
    };
  }
  const eligible = recent
    .filter((p) => p.createdAt > wf.lastEnabledAt!)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const ids = eligible.map((p) => p.platformPostId);
  const [taken, output] = await Promise.all([
    alreadyTaken(ctx, wf.id, ids),
    workflowOutput(ctx, wf.sourceAccountId, ids),
  ]);
  const settings = wf.settings as WorkflowSettings;
  const dests = await ctx.db.db
    .select()
    .from(accounts)
    .where(sql`${accounts.id} = any(${uuidArray(wf.targetAccountIds)}::uuid[])`);
  const destinations: Destination[] = wf.targetAccountIds.flatMap((id) => {
    const account = dests.find((a) => a.id === id);
    return account
      ? [
          {
            account,
            plugin: ctx.platforms.get(account.platform),
            settings: settings.destination_publish_settings?.[id],
          },
        ]
      : [];
  });
  const sourceName = ctx.platforms.get(src.account.platform)?.displayName ?? src.account.platform;
  const out: string[] = [];
  for (const post of eligible) {
    if (taken.has(post.platformPostId)) continue;
    const planned = await Promise.all(
      destinations.map((d) => plan(ctx, settings, post, d, output.has(post.platformPostId), sourceName)),
    );
    const id = await take(ctx, wf, post, planned);
    if (id) out.push(id);
  }
  return { ok: true, found: eligible.length, taken: out };
}
