/**
 * crier posts import FILE: bulk import from the command line, through the running server's admin socket
 * (embedded database) or on the database directly, in parts of PART_ROWS rows so progress moves. Each
 * row keeps its number in the whole file and the key POST /v1/posts/bulk would give it, so a run that
 * stopped half way (or a file sent again) creates nothing twice.
 */
import { readFileSync, statSync } from "node:fs";
import { loadConfig } from "../config.ts";
import { ApiError } from "../http/errors.ts";
import type { BulkResult, BulkRowResult } from "../modules/posts/bulk-model.ts";
import { csvEntries, type BulkEntry } from "../modules/posts/bulk-csv.ts";
import { HELP } from "./help.ts";
import { rowProgress } from "./progress.ts";
import { adminSession, parse, Refused, UsageError } from "./run.ts";

/** Rows per admin call: small enough for the bar to move, large enough to share the reads of a part. */
export const PART_ROWS = 50;
/** The largest file read (the API takes MAX_BODY_BYTES per request; the command sends any file in parts). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Rows one run takes: the command parts the file, so it is not held to the API's 1,000. */
const MAX_FILE_ROWS = 100_000;

export async function postsCommand(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "import") return importCommand(rest);
  if (sub === undefined || sub === "--help" || sub === "-h") console.log(HELP.posts);
  else throw new UsageError(`unknown command 'posts ${sub}' (see crier posts --help)`);
}

async function importCommand(args: string[]) {
  const { values, positionals } = parse(
    args,
    {
      profile: { type: "string" },
      "dry-run": { type: "boolean" },
      "idempotency-key": { type: "string" },
      json: { type: "boolean" },
    },
    HELP["posts import"],
  );
  if (positionals.length !== 1) throw new UsageError("posts import takes exactly one FILE (see --help)");
  if (values.profile !== undefined && !/^[0-9a-f-]{36}$/i.test(values.profile))
    throw new UsageError("--profile takes a profile's id from 'crier profiles list'");
  const key = values["idempotency-key"] as string | undefined;
  if (key !== undefined && (key.length === 0 || key.length > 200))
    throw new UsageError("--idempotency-key must be 1 to 200 characters");
  const file = positionals[0];
  const entries = readEntries(file);
  const dryRun = !!values["dry-run"];
  const progress = rowProgress(dryRun ? "checking" : "importing", entries.length);
  const rows: BulkRowResult[] = [];
  await adminSession(loadConfig(), async (call) => {
    for (let i = 0; i < entries.length; i += PART_ROWS) {
      const part = (await call("posts.import", {
        profileId: values.profile,
        entries: entries.slice(i, i + PART_ROWS),
        dryRun,
        key,
      })) as BulkResult;
      rows.push(...part.rows);
      progress.update(rows.length);
    }
  });
  progress.end();
  const result = summary(rows, dryRun);
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else report(result);
  if (result.failed) process.exitCode = 1;
}

/** The file's rows: JSON ({"posts": [...]} or an array of posts) by its first character, CSV otherwise. */
function readEntries(file: string): BulkEntry[] {
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_FILE_BYTES) throw new Refused(`${file} is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB`);
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (e instanceof Refused) throw e;
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    const start = text.replace(/^\uFEFF/, "").trimStart()[0];
    if (start === "{" || start === "[") return jsonEntries(file, text);
    return csvEntries(text, MAX_FILE_ROWS);
  } catch (e) {
    if (e instanceof ApiError) throw new Refused(`${file}: ${e.message} ${e.hint ?? ""}`.trim());
    throw e;
  }
}

function jsonEntries(file: string, text: string): BulkEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Refused(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  const list = Array.isArray(value) ? value : (value as { posts?: unknown })?.posts;
  if (!Array.isArray(list) || !list.length)
    throw new Refused(`${file}: expected {"posts": [<the body of POST /v1/posts>, …]} with at least one post`);
  if (list.length > MAX_FILE_ROWS) throw new Refused(`${file} holds more than ${MAX_FILE_ROWS} posts; split it`);
  return list.map((body, i) => ({ row: i + 1, body }));
}

function summary(rows: BulkRowResult[], dryRun: boolean): BulkResult {
  const ok = rows.filter((r) => r.ok).length;
  return {
    dry_run: dryRun,
    total: rows.length,
    ok,
    failed: rows.length - ok,
    created: rows.filter((r) => r.ok && !dryRun && r.replayed === false).length,
    replayed: rows.filter((r) => r.replayed).length,
    rows,
  };
}

/** One line per problem of a failed row, then one line of counts. */
function report(r: BulkResult) {
  for (const row of r.rows)
    for (const p of row.problems) {
      const where = [p.column ?? p.field, p.account_id && `account ${p.account_id}`].filter(Boolean).join(", ");
      console.log(`row ${row.row}: ${p.code}${where ? ` (${where})` : ""}: ${p.message}`);
    }
  const earlier = r.replayed ? `, ${r.replayed} already imported` : "";
  console.log(
    r.dry_run
      ? `dry run: ${r.ok} of ${r.total} rows can be imported${earlier}, ${r.failed} with problems; nothing was created`
      : `imported ${r.ok} of ${r.total} rows: ${r.created} created${earlier}, ${r.failed} failed`,
  );
}
