/**
 * The shapes of POST /v1/posts/bulk (bulk import). Kept beside model.ts rather than in it: the rows are
 * PostCreate bodies, declared there once, and this file only wraps them.
 */
import { t, type Static } from "elysia";
import { Kind } from "@sinclair/typebox";
import { PostCreate, PostStatus, Problem } from "./model.ts";

/** Most posts one bulk request (or one run of `crier posts import`) may hold. */
export const MAX_BULK_POSTS = 1000;

/**
 * One post of the JSON form. Described as PostCreate (so the API description and the MCP tool show the
 * body of POST /v1/posts), but not checked by the framework: a post that breaks the schema is a problem
 * of its row, answered per row, never a 400 for the whole import. The kind makes TypeBox accept anything;
 * src/modules/posts/bulk.ts checks each row against PostCreate itself.
 */
const BulkRowBody = {
  ...(JSON.parse(JSON.stringify(PostCreate)) as Record<string, unknown>),
  [Kind]: "Unknown",
  description:
    "The body of POST /v1/posts. Checked row by row: a post that breaks the schema or a rule is reported in its row of the answer and the others go on.",
} as unknown as ReturnType<typeof t.Unknown>;

export const BulkPostsJson = t.Object(
  {
    posts: t.Array(BulkRowBody, {
      description: `1 to ${MAX_BULK_POSTS} posts; posts[0] is row 1 of the answer. More is 400 too_many_posts, none 400 no_posts.`,
    }),
  },
  { additionalProperties: false, title: "BulkPostsJson" },
);

export const BulkPostsCsv = t.String({
  contentMediaType: "text/csv",
  title: "BulkPostsCsv",
  description:
    "Extension: RFC 4180 CSV (comma-separated, UTF-8, an optional byte-order mark), a header row first. Header names are case-insensitive. " +
    "Columns: content (required; may be empty for a media-only post), account_ids (required; account ids separated by spaces), " +
    'publish_at (an ISO 8601 date-time with a time zone; empty publishes now), queue (true/false, yes/no or 1/0: true sends the post to the profile\'s posting queue as "queue": true on POST /v1/posts), ' +
    "media_urls (URLs separated by spaces), options (a JSON object keyed by account id: that target's platform_options), " +
    "first_comment (a JSON object keyed by account id, or plain text for every target: each target's first_comment), external_id. " +
    "Any other column is 400 unknown_csv_columns naming it; a missing required column 400 missing_csv_columns; a file that is not CSV (an unclosed quote) 400 invalid_csv naming the line. " +
    "Rows are numbered as a spreadsheet shows them: the header is row 1, so the first post is row 2. Empty lines are skipped but counted. " +
    "A row whose cells cannot be read (options that are not JSON, an account in options that is not in account_ids, a cell count other than the header's) is reported in its row.",
});

export const BulkPostsBody = t.Union([BulkPostsJson, BulkPostsCsv]);

export const BulkQuery = t.Object({
  dry_run: t.Optional(
    t.Boolean({
      description:
        "true: check every row as POST /v1/posts/validate does and answer per row; nothing is created. Rows an earlier import already created (same keys) are answered as replayed.",
    }),
  ),
});

export const BulkProblem = t.Composite(
  [
    Problem,
    t.Object({
      account_id: t.Optional(t.String({ description: "The target the problem belongs to, for a target's problem." })),
      column: t.Optional(
        t.String({ description: "CSV imports: the column the field comes from (content, account_ids, options…)." }),
      ),
    }),
  ],
  { title: "BulkProblem" },
);

export const BulkRowResult = t.Object(
  {
    row: t.Integer({
      description:
        "The row's number: for CSV the spreadsheet row (the header is row 1, the first post row 2), for JSON the position in posts counted from 1. With an Idempotency-Key, the row's own key is `<Idempotency-Key>:<row>`.",
    }),
    ok: t.Boolean({
      description: "Dry run: POST /v1/posts would accept the row now. Import: the post exists (created now or before).",
    }),
    post_id: t.Optional(t.String({ description: "The post created for this row (or by an earlier import of it)." })),
    status: t.Optional(PostStatus),
    replayed: t.Optional(
      t.Boolean({ description: "true when an earlier import with the same key created this row's post: nothing new." }),
    ),
    problems: t.Array(BulkProblem, {
      description:
        "Everything wrong with the row (empty when ok): the schema, the row's cells, and every problem POST /v1/posts/validate finds, target problems carrying account_id.",
    }),
    ignored_fields: t.Optional(
      t.Array(t.String(), {
        description: "JSON rows: keys PostCreate does not declare, ignored as POST /v1/posts ignores them.",
      }),
    ),
  },
  { title: "BulkRowResult" },
);

export const BulkResult = t.Object(
  {
    dry_run: t.Boolean(),
    total: t.Integer({ description: "Rows with a post (empty CSV lines are not counted)." }),
    ok: t.Integer({ description: "Rows that are fine (dry run) or whose post exists (import)." }),
    failed: t.Integer({ description: "Rows with problems; nothing was created for them." }),
    created: t.Integer({ description: "Posts created by this request (0 on a dry run)." }),
    replayed: t.Integer({ description: "Rows whose post an earlier import with the same keys created." }),
    rows: t.Array(BulkRowResult, { description: "One entry per row, in row order." }),
  },
  { title: "BulkResult" },
);

export type BulkProblem = Static<typeof BulkProblem>;
export type BulkRowResult = Static<typeof BulkRowResult>;
export type BulkResult = Static<typeof BulkResult>;
