/**
 * Bulk import (POST /v1/posts/bulk and `crier posts import`): many POST /v1/posts bodies, each checked
 * by the code POST /v1/posts/validate runs and, unless it is a dry run, created by createPost with its
 * own idempotency key (rowKey). A row's failure never stops the others; the answer names each
 * row's post or its problems. The reads every row needs (accounts, own media, earlier imports' keys) are
 * made once for the whole import, so a dry run of 1,000 rows is a few queries, not thousands.
 */
import { and, eq, inArray } from "drizzle-orm";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { AppContext } from "../../context.ts";
import { idempotencyKeys, posts, postTargets } from "../../db/schema.ts";
import { postStatus, type TargetStatus } from "../../domain/status.ts";
import { ApiError } from "../../http/errors.ts";
import { dropUnknownKeys } from "../../http/ignored-fields.ts";
import { requestHash } from "../../http/idempotency.ts";
import { describeIssue } from "../../http/validation.ts";
import { mediaProblems } from "../../platform/host/content-check.ts";
import { ownMediaOf } from "../../media/own.ts";
import { readTargetAccounts } from "../accounts/target-accounts.ts";
import { PostCreate, type Post } from "./model.ts";
import type { BulkProblem, BulkResult, BulkRowResult } from "./bulk-model.ts";
import { columnOf, type BulkEntry } from "./bulk-csv.ts";
import { CREATE_OPERATION, createPost } from "./service.ts";
import { validatePost, type SharedReads } from "./validate.ts";

export interface BulkOptions {
  dryRun: boolean;
  /** The request's Idempotency-Key: each row's key is `${key}:${row}`; without it, made from the row itself. */
  key?: string;
  lenient?: boolean;
}

/** Rows created at once: enough for PostgreSQL's pool to share commits, few enough to stay polite. */
const CREATE_CONCURRENCY = 4;
/** Schema problems listed per row at most (a row of garbage would otherwise list every field). */
const MAX_SCHEMA_PROBLEMS = 10;

/**
 * A row's idempotency key: `<Idempotency-Key>:<row>`, or without one `bulk-<SHA-256 of the row's body>`
 * (its JSON with the keys sorted), so the same post is created once however often and in whatever file
 * or part it is sent, and a file fixed after a failed import creates only the rows that were missing.
 */
export const rowKey = (key: string | undefined, row: number, body: unknown) =>
  key !== undefined ? `${key}:${row}` : `bulk-${requestHash(body)}`;

/** A row on its way through the import. */
interface Work {
  entry: BulkEntry;
  key: string;
  body?: PostCreate;
  /** Answered from an earlier import's key (replayed, or a conflict): not checked again. */
  settled?: boolean;
  result: BulkRowResult;
}

export async function runBulk(
  ctx: AppContext,
  profileId: string,
  entries: BulkEntry[],
  opts: BulkOptions,
): Promise<BulkResult> {
  const work = entries.map((entry) => checkShape(entry, opts.key));
  await answerEarlierImports(ctx, profileId, work);
  // A row whose cells were wrong is checked too where its body could be made, so it lists every problem.
  const fresh = work.filter((w) => w.body && !w.settled);
  const shared = await sharedReads(
    ctx,
    profileId,
    fresh.map((w) => w.body!),
  );
  for (const w of fresh) {
    const v = await validatePost(ctx, profileId, w.body!, { lenient: opts.lenient, shared });
    w.result.problems.push(
      ...v.problems,
      ...v.targets.flatMap((t) => t.problems.map((p) => ({ ...p, account_id: t.account_id }))),
    );
  }
  for (const w of work) {
    if (w.entry.csv) for (const p of w.result.problems) p.column ??= columnOf(p.field);
    w.result.ok = w.result.replayed === true || w.result.problems.length === 0;
  }
  let created = 0;
  if (!opts.dryRun) {
    await eachLimited(
      work.filter((w) => w.result.ok && !w.result.replayed),
      CREATE_CONCURRENCY,
      async (w) => {
        try {
          const { value, replayed } = await createPost(ctx, profileId, w.body!, w.key, { lenient: opts.lenient });
          Object.assign(w.result, { post_id: value.id, status: value.status, replayed });
          if (!replayed) created++;
        } catch (e) {
          // What changed since the check (an account disconnected meanwhile) fails this row only. A database
          // failure fails the request (503 through the envelope): sent again, rows already created replay.
          if (!(e instanceof ApiError)) throw e;
          w.result.ok = false;
          w.result.problems.push({ code: e.errorCode, message: e.message, hint: e.hint ?? "", field: "" });
        }
      },
    );
  }
  const rows = work.map((w) => w.result);
  const ok = rows.filter((r) => r.ok).length;
  return {
    dry_run: opts.dryRun,
    total: rows.length,
    ok,
    failed: rows.length - ok,
    created,
    replayed: rows.filter((r) => r.replayed).length,
    rows,
  };
}

let checker: TypeCheck<typeof PostCreate> | undefined;

/** The row's body as PostCreate, or its schema problems (the problems the row brought along kept). */
function checkShape(entry: BulkEntry, key: string | undefined): Work {
  const result: BulkRowResult = { row: entry.row, ok: false, problems: [...(entry.problems ?? [])] };
  const work: Work = { entry, key: "", result };
  const body = entry.body;
  // JSON rows are POST /v1/posts bodies: keys PostCreate does not declare are ignored as that route ignores them.
  if (!entry.csv) {
    const ignored = dropUnknownKeys(body, PostCreate, ["targets"]);
    if (ignored.length) result.ignored_fields = ignored;
  }
  checker ??= TypeCompiler.Compile(PostCreate);
  if (checker.Check(body)) {
    work.body = body;
    work.key = rowKey(key, entry.row, body);
    return work;
  }
  const seen = new Set<string>();
  for (const error of checker.Errors(body)) {
    const field = fieldOf(error.path);
    if (seen.has(field)) continue;
    seen.add(field);
    result.problems.push({
      code: "validation_error",
      message: `${field || "the post"} ${describeIssue(error as never)}.`,
      hint: "Fix the field; POST /v1/posts in /openapi.json describes every field of a post.",
      field,
    });
    if (seen.size === MAX_SCHEMA_PROBLEMS) break;
  }
  return work;
}

/** "/targets/0/account_id" → "targets[0].account_id", as the posts routes name fields. */
const fieldOf = (path: string) =>
  path
    .split("/")
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join("")
    .replace(/^\./, "");

/**
 * Rows an earlier import (or POST /v1/posts with the row's key) already created are answered from that:
 * with the same body it is a replay, with another a conflict, as Idempotency-Key always works. One read.
 */
async function answerEarlierImports(ctx: AppContext, profileId: string, work: Work[]) {
  const keyed = work.filter((w) => w.body && !w.result.problems.length);
  if (!keyed.length) return;
  const earlier = await ctx.db.db
    .select({ key: idempotencyKeys.key, hash: idempotencyKeys.requestHash, postId: idempotencyKeys.resourceId })
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.profileId, profileId),
        eq(idempotencyKeys.operation, CREATE_OPERATION),
        inArray(
          idempotencyKeys.key,
          keyed.map((w) => w.key),
        ),
      ),
    );
  if (!earlier.length) return;
  const byKey = new Map(earlier.map((e) => [e.key, e]));
  const statuses = await postStatuses(
    ctx,
    profileId,
    earlier.map((e) => e.postId),
  );
  for (const w of keyed) {
    const e = byKey.get(w.key);
    if (!e) continue;
    w.settled = true;
    if (e.hash !== requestHash(w.body)) {
      w.result.problems.push({
        code: "idempotency_conflict",
        message: `the key ${w.key} already created another post (${e.postId}) from a different body.`,
        hint: "Import changed rows with a new Idempotency-Key (or --idempotency-key), or send the original row again.",
        field: "",
      });
      continue;
    }
    const status = statuses.get(e.postId);
    if (status) Object.assign(w.result, { replayed: true, post_id: e.postId, status });
    else
      w.result.problems.push({
        code: "post_deleted",
        message: `an earlier import created this row's post ${e.postId}, which has been deleted since.`,
        hint: "Import it again with a new Idempotency-Key (or --idempotency-key) if it should be posted again.",
        field: "",
      });
  }
}

async function postStatuses(ctx: AppContext, profileId: string, ids: string[]): Promise<Map<string, Post["status"]>> {
  const rows = await ctx.db.db
    .select({ id: posts.id, status: postTargets.status })
    .from(posts)
    .innerJoin(postTargets, eq(postTargets.postId, posts.id))
    .where(and(eq(posts.profileId, profileId), inArray(posts.id, ids)));
  const byPost = new Map<string, TargetStatus[]>();
  for (const r of rows) byPost.set(r.id, [...(byPost.get(r.id) ?? []), r.status]);
  return new Map([...byPost].map(([id, list]) => [id, postStatus(list)]));
}

/** The accounts and own media every row names, read in one query each. */
async function sharedReads(ctx: AppContext, profileId: string, bodies: PostCreate[]): Promise<SharedReads> {
  const ids = new Set<string>();
  const urls = new Set<string>();
  for (const b of bodies) {
    for (const t of b.targets) ids.add(t.account_id);
    for (const m of mediaProblems(b.media).items) urls.add(m.url);
  }
  const uuids = [...ids].filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
  const accounts = await readTargetAccounts(ctx.db, ctx.db.db, profileId, uuids);
  const list = [...urls];
  const own = await ownMediaOf({ db: ctx.db.db, storage: ctx.storage }, profileId, list);
  return { accounts, media: new Map(list.map((url, i) => [url, own[i]])) };
}

async function eachLimited<T>(items: T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
