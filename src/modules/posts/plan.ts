/**
 * Building a post's targets from PostTargetInput: every rule is checked here, before anything is written
 * (one validator for create, update and validate), and with lenient handling each target is fitted to
 * its platform first.
 */
import { eq } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import type { Queryable, Tx } from "../../db/client.ts";
import { postTargets } from "../../db/schema.ts";
import type { MediaItem, Plugin } from "../../platform/sdk.ts";
import type { PostTargetInput } from "./model.ts";
import { cachedTargetAccounts, readTargetAccounts, type TargetAccount } from "../accounts/target-accounts.ts";
import { optionsForPlugin } from "../../platform/host/options.ts";
import { problemError, targetProblems, type Problem } from "../../platform/host/content-check.ts";
import { fitTarget, type Adjustment } from "../../platform/host/fit.ts";
import type { OwnFileFacts } from "../../platform/host/media-rules.ts";
import { ownMediaOf, withOwnNumbers } from "../../media/own.ts";
import { videoTools } from "../../media/tools.ts";
import { pluginForAccount } from "../../platform/host/account-limits.ts";

type TargetRow = typeof postTargets.$inferSelect;

export interface NewTarget {
  username: string;
  accountId: string;
  platform: string;
  targetVariant: string | null;
  position: number;
  contentOverride: string | null;
  platformOptions: Record<string, unknown> | null;
  fittedContent: string | null;
  fittedMedia: MediaItem[] | null;
  adjustments: Adjustment[] | null;
  /** Posted by the same account right after the post (src/engine/first-comment.ts); null: none. */
  firstComment: string | null;
}

/** What a post's targets are planned from: the input targets, and the post's text and media they share. */
export interface PostDraft {
  targets: PostTargetInput[];
  content: string;
  media: MediaItem[];
  /** Parallel to media: what Crier read of each of its own files, null for the others (ownMedia). */
  mediaFacts?: (OwnFileFacts | null)[];
}

/**
 * The post's media with each of Crier's own files described by the file itself: width, height, duration
 * and size come from what the upload read (the client's numbers stand only for files that are not ours),
 * and the facts the checks compare. Create, update and validate all plan from this; `db` is the
 * transaction when there is one (the embedded database has one connection).
 */
export async function ownMedia(
  ctx: AppContext,
  db: Queryable,
  profileId: string,
  media: MediaItem[],
): Promise<{ media: MediaItem[]; mediaFacts: (OwnFileFacts | null)[] }> {
  const own = await ownMediaOf(
    { db, storage: ctx.storage },
    profileId,
    media.map((m) => m.url),
  );
  const { items, facts } = withOwnNumbers(media, own);
  return { media: items, mediaFacts: facts };
}

/**
 * cached: accounts this copy remembers may stand in for a read (create only, whose insert checks them
 * again); lenient: each target is fitted to its platform before it is checked (Prefer: handling=lenient).
 */
export interface PlanOptions {
  cached?: boolean;
  lenient?: boolean;
  /** Accounts read once for many posts (a bulk import's dry run): planned from these instead of a read. */
  accounts?: TargetAccount[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the checks found for one input target: the rows it becomes, or the problems that stop it. */
export interface TargetPlan {
  accountId: string;
  platform: string | null;
  label: string;
  problems: Problem[];
  rows: NewTarget[];
  plugin: Plugin | null;
  content: string;
  /** The media this target gets: the post's, or what lenient handling kept. */
  media: MediaItem[];
  /** What lenient handling changed; null when the target was checked strictly. */
  adjustments: Adjustment[] | null;
}

/**
 * Checks every input target and collects every problem (POST /v1/posts/validate lists them all; create
 * and update throw the first, through buildTargets): one validator for both, so a post that validates
 * is accepted unless its accounts changed in between. With `cached`, accounts this copy remembers stand in
 * for a read when all of them are known, connected and of this profile (insertCheckedPostsStatement checks
 * them again).
 */
export async function planTargets(
  ctx: AppContext,
  db: Queryable,
  profileId: string,
  post: PostDraft,
  { cached = false, lenient = false, accounts }: PlanOptions = {},
): Promise<TargetPlan[]> {
  const { targets: inputs, content, media } = post;
  // Lenient handling may drop items: each kept item finds its facts by identity.
  const factsOf = new Map(media.map((m, i) => [m, post.mediaFacts?.[i] ?? null]));
  const ids = [...new Set(inputs.map((t) => t.account_id).filter((id) => UUID.test(id)))];
  // The ids passed the UUID check above, so the array literal the read builds is well formed.
  const rows =
    accounts ??
    (cached ? cachedTargetAccounts(ctx.db, profileId, ids) : undefined) ??
    (await readTargetAccounts(ctx.db, db, profileId, ids));
  const byId = new Map(rows.map((r) => [r.id, r]));
  // Own videos can be converted only where ffmpeg is found.
  const ffmpeg = videoTools(ctx.config).ffmpeg !== null;
  const seen = new Map<string, number>();
  let position = 0;
  return inputs.map((input, i) => {
    const account = byId.get(input.account_id);
    const text = input.content_override ?? content;
    const plan: TargetPlan = {
      accountId: input.account_id,
      platform: account?.platform ?? null,
      label: account
        ? `targets[${i}] (account ${input.account_id}, ${account.platform})`
        : `targets[${i}] (account ${input.account_id})`,
      problems: [],
      rows: [],
      plugin: null,
      content: text,
      media,
      adjustments: null,
    };
    const problem = (code: string, message: string, hint: string, field = `targets[${i}].account_id`) => {
      plan.problems.push({ code, message, hint, field });
      return plan;
    };
    if (!account)
      return problem(
        "target_account_not_found",
        "no connected account with this id in this profile.",
        "List your accounts with GET /v1/accounts and use one of their ids.",
      );
    if (account.status === "disconnected")
      return problem(
        "target_account_disconnected",
        `the ${account.platform} account @${account.username} is disconnected.`,
        "Connect the account again (POST /v1/accounts/connect/{platform}) or remove this target.",
      );
    const declared = ctx.platforms.get(account.platform);
    const plugin = declared && pluginForAccount(declared, account.metadata as Record<string, unknown> | null);
    if (!plugin || !plugin.publish || ctx.platforms.statusOf(account.platform) !== "implemented")
      return problem(
        "platform_not_supported",
        `publishing to ${account.platform} is not available in this version of Crier.`,
        "Remove this target; the README lists the platforms Crier publishes to.",
      );
    plan.plugin = plugin;
    if (!plugin.capabilities.destination)
      return problem(
        "target_not_destination",
        "this account can only be a source, not a destination.",
        "Remove this target.",
      );
    const repeat = seen.get(account.id) ?? 0;
    seen.set(account.id, repeat + 1);
    if (repeat > 0 && !plugin.capabilities.threads)
      problem(
        "duplicate_target",
        `the account appears more than once and ${plugin.displayName} has no threads.`,
        "List each account once.",
      );
    const options = input.platform_options ?? {};
    const reply = repeat > 0;
    if (lenient) {
      const fitted = fitTarget({ plugin, content: text, media, reply, options });
      Object.assign(plan, { content: fitted.content, media: fitted.media, adjustments: fitted.adjustments });
    }
    const check = {
      label: plan.label,
      accountId: account.id,
      plugin,
      content: plan.content,
      media: plan.media,
      mediaFacts: plan.media.map((m) => factsOf.get(m) ?? null),
      options,
      reply,
      ffmpeg,
      firstComment: input.first_comment,
    };
    for (const p of targetProblems(check))
      plan.problems.push({
        ...p,
        field:
          p.field === "content" && input.content_override != null
            ? `targets[${i}].content_override`
            : p.field.startsWith("platform_options") || p.field === "first_comment"
              ? `targets[${i}].${p.field}`
              : p.field,
      });
    if (plan.problems.length) return plan;
    const variants = plugin.variants?.(optionsForPlugin(plugin, options) as never) ?? null;
    // target_variant's schema lists the declared names only: anything else is a plugin bug, not a bad request.
    const undeclared = variants?.find((v) => !plugin.variantNames?.includes(v));
    if (undeclared !== undefined)
      throw new Error(`plugin ${plugin.platform} made the undeclared variant "${undeclared}"`);
    if (variants && repeat > 0)
      return problem(
        "duplicate_target",
        "the account appears more than once.",
        "List each account once; choose placements in platform_options.",
      );
    for (const [v, variant] of (variants ?? [null]).entries()) {
      plan.rows.push({
        username: account.username,
        accountId: account.id,
        platform: account.platform,
        targetVariant: variant,
        position: position++,
        contentOverride: input.content_override ?? null,
        platformOptions: input.platform_options ?? null,
        fittedContent: plan.content !== text ? plan.content : null,
        fittedMedia: plan.media !== media ? plan.media : null,
        adjustments: plan.adjustments,
        // One comment per input target: a target made of variants carries it on its first only.
        firstComment: v === 0 ? (input.first_comment ?? null) : null,
      });
    }
    return plan;
  });
}

/** The targets to write, or the 400 of the first problem (naming its target). */
export async function buildTargets(
  ctx: AppContext,
  db: Queryable,
  profileId: string,
  post: PostDraft,
  opts: PlanOptions = {},
): Promise<NewTarget[]> {
  const plans = await planTargets(ctx, db, profileId, post, opts);
  const failed = plans.find((p) => p.problems.length);
  if (failed) throw problemError(failed.problems[0], failed.label);
  return plans.flatMap((p) => p.rows);
}

/**
 * Stores what fitting the new content gave each kept target: the planned rows come in the order of the
 * targets they were rebuilt from, so each is matched to the first unmatched target of its account and variant.
 */
export async function refit(tx: Tx, current: TargetRow[], list: NewTarget[]) {
  const unmatched = current.filter((t) => t.status === "scheduled");
  for (const row of list) {
    const i = unmatched.findIndex((t) => t.accountId === row.accountId && t.targetVariant === row.targetVariant);
    if (i === -1) continue;
    const [target] = unmatched.splice(i, 1);
    await tx
      .update(postTargets)
      .set({ fittedContent: row.fittedContent, fittedMedia: row.fittedMedia, adjustments: row.adjustments })
      .where(eq(postTargets.id, target.id));
  }
}
