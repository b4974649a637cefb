/**
 * Bulk import's CSV form: a file with a header row becomes one POST /v1/posts body per row. What is wrong
 * with the file as a whole (not CSV, unknown or missing columns, too many rows) is a 400; what is wrong
 * with one row's cells is that row's problem, reported with the others. The columns are described on
 * BulkPostsCsv (bulk-model.ts).
 */
import { parse } from "csv-parse/sync";
import { BadRequest } from "../../http/errors.ts";
import { MAX_BULK_POSTS, type BulkProblem } from "./bulk-model.ts";

/** One row of an import: its number, the body to check, and problems found before the body was checked. */
export interface BulkEntry {
  row: number;
  body?: unknown;
  problems?: BulkProblem[];
  /** CSV rows: problems' fields are named by column too. */
  csv?: boolean;
}

export const CSV_COLUMNS = [
  "content",
  "account_ids",
  "publish_at",
  "queue",
  "media_urls",
  "options",
  "first_comment",
  "external_id",
] as const;
type Column = (typeof CSV_COLUMNS)[number];
const REQUIRED: Column[] = ["content", "account_ids"];

const HINT = `Columns: ${CSV_COLUMNS.join(", ")} (content and account_ids required); see POST /v1/posts/bulk in /openapi.json.`;

/** Spaces (commas too, which no id or URL contains unescaped) separate the items of a list cell. */
const list = (cell: string) => cell.split(/[\s,]+/).filter(Boolean);

/**
 * The rows of a CSV import (at most `maxRows`: the API's cap, or the command line's, which sends parts). Throws 400 invalid_csv (naming the line), unknown_csv_columns,
 * missing_csv_columns, no_posts or too_many_posts for the file as a whole.
 */
export function csvEntries(text: string, maxRows = MAX_BULK_POSTS): BulkEntry[] {
  let records: string[][];
  try {
    // Blank lines stay records ([""]), so a row's number is the spreadsheet's row number.
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: false }) as string[][];
  } catch (e) {
    const err = e as Error & { lines?: number };
    throw new BadRequest(
      "invalid_csv",
      `The CSV cannot be read at line ${err.lines ?? "?"}: ${err.message.replace(/ at line \d+/, "")}.`,
      'Quote a cell that holds commas, quotes or line breaks ("…"), and double the quotes inside it ("").',
    );
  }
  const [header, ...data] = records;
  if (!header || header.every((h) => h.trim() === "")) throw noPosts();
  const columns = header.map((h) => h.trim().toLowerCase());
  const unknown = columns.filter((c) => !(CSV_COLUMNS as readonly string[]).includes(c));
  if (unknown.length)
    throw new BadRequest(
      "unknown_csv_columns",
      `Unknown column${unknown.length > 1 ? "s" : ""}: ${unknown.map((c) => JSON.stringify(c)).join(", ")}.`,
      HINT,
    );
  const missing = REQUIRED.filter((c) => !columns.includes(c));
  if (missing.length)
    throw new BadRequest("missing_csv_columns", `The header lacks the column(s) ${missing.join(", ")}.`, HINT);
  const twice = columns.find((c, i) => columns.indexOf(c) !== i);
  if (twice) throw new BadRequest("duplicate_csv_column", `The column ${twice} appears twice in the header.`, HINT);
  const entries: BulkEntry[] = [];
  data.forEach((cells, i) => {
    if (cells.every((c) => c.trim() === "")) return;
    // The header is row 1.
    entries.push(csvEntry(i + 2, columns as Column[], cells));
  });
  if (!entries.length) throw noPosts();
  if (entries.length > maxRows) throw tooMany(entries.length, maxRows);
  return entries;
}

export const noPosts = () =>
  new BadRequest("no_posts", "The import holds no posts.", "Send at least one post (one CSV row under the header).");

export const tooMany = (n: number, max = MAX_BULK_POSTS) =>
  new BadRequest(
    "too_many_posts",
    `The import holds ${n} posts; one request takes at most ${max}.`,
    `Split it into files of ${MAX_BULK_POSTS} rows or fewer (crier posts import sends any file in parts).`,
  );

function csvEntry(row: number, columns: Column[], cells: string[]): BulkEntry {
  const problems: BulkProblem[] = [];
  const problem = (column: Column | "row", code: string, message: string, hint: string) =>
    problems.push({ code, message, hint, field: column, column });
  if (cells.length !== columns.length)
    problem(
      "row",
      "csv_cell_count",
      `the row has ${cells.length} cells and the header ${columns.length}.`,
      "Give every row as many cells as the header has columns (quote a cell that holds a comma).",
    );
  const cell = (c: Column) => {
    const i = columns.indexOf(c);
    return i === -1 ? "" : (cells[i] ?? "");
  };
  const accountIds = list(cell("account_ids"));
  const body: Record<string, unknown> = {
    content: cell("content"),
    targets: accountIds.map((account_id) => ({ account_id })),
  };
  const publishAt = cell("publish_at").trim();
  if (publishAt) body.publish_at = publishAt;
  const queue = cell("queue").trim().toLowerCase();
  if (["true", "yes", "1"].includes(queue)) body.queue = true;
  else if (!["", "false", "no", "0"].includes(queue))
    problem("queue", "invalid_csv_cell", `queue is "${cell("queue")}".`, "Write true or false (or leave it empty).");
  const media = list(cell("media_urls"));
  if (media.length) body.media = media.map((url) => ({ url }));
  const externalId = cell("external_id");
  if (externalId !== "") body.external_id = externalId;
  const targets = body.targets as Record<string, unknown>[];
  const options = keyedCell(cell("options"), "options", accountIds, problem, false);
  const comments = keyedCell(cell("first_comment"), "first_comment", accountIds, problem, true);
  for (const target of targets) {
    const id = target.account_id as string;
    if (options?.has(id)) target.platform_options = options.get(id);
    if (comments?.has(id)) target.first_comment = comments.get(id);
  }
  // The body is checked as well, so the row's answer names every problem at once.
  return { row, body, problems, csv: true };
}

type ProblemAt = (column: Column | "row", code: string, message: string, hint: string) => unknown;

/**
 * A cell holding a JSON object keyed by account id (options, first_comment); for first_comment a cell
 * that is not an object ({ first) is the same text for every target. Null when the cell is empty.
 */
function keyedCell(
  raw: string,
  column: "options" | "first_comment",
  accountIds: string[],
  problem: ProblemAt,
  textForAll: boolean,
): Map<string, unknown> | null {
  const text = raw.trim();
  if (text === "") return null;
  if (textForAll && !text.startsWith("{")) return new Map(accountIds.map((id) => [id, raw]));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    problem(
      column,
      "invalid_csv_cell",
      `${column} is not JSON: ${(e as Error).message}.`,
      `Write a JSON object keyed by account id, e.g. {"<account id>": {…}}; double the quotes inside a quoted CSV cell.`,
    );
    return null;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    problem(column, "invalid_csv_cell", `${column} is not a JSON object.`, `Write {"<account id>": …}.`);
    return null;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const stray = entries.filter(([id]) => !accountIds.includes(id)).map(([id]) => id);
  if (stray.length) {
    problem(
      column,
      "invalid_csv_cell",
      `${column} names account(s) not in account_ids: ${stray.join(", ")}.`,
      "Key it by the ids listed in the row's account_ids.",
    );
    return null;
  }
  return new Map(entries);
}

/**
 * The CSV column a field of the created body comes from, so a spreadsheet user knows which cell to fix.
 */
export function columnOf(field: string): string | undefined {
  if (field === "content" || /^targets\[\d+\]\.content_override$/.test(field)) return "content";
  if (field === "publish_at" || field === "external_id" || field === "queue") return field;
  if (field.startsWith("media")) return "media_urls";
  if (/^targets(\[\d+\])?\.?account_id/.test(field) || field === "targets") return "account_ids";
  if (/^targets\[\d+\]\.platform_options/.test(field)) return "options";
  if (/^targets\[\d+\]\.first_comment/.test(field)) return "first_comment";
  return undefined;
}
