/** POST /v1/posts/bulk: bulk import of posts as JSON or CSV, with a dry run. */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { allowBody } from "../../http/body-allowance.ts";
import { MAX_JSON_VALUES } from "../../http/json-guard.ts";
import { IdempotencyHeader } from "../../http/idempotency.ts";
import { Data, errors } from "../../http/model.ts";
import { handlingPreference, LENIENT_APPLIED, LENIENT_NOTE } from "../../http/prefer.ts";
import { BulkPostsBody, BulkQuery, BulkResult, MAX_BULK_POSTS } from "./bulk-model.ts";
import { csvEntries, noPosts, tooMany, type BulkEntry } from "./bulk-csv.ts";
import { runBulk } from "./bulk.ts";

export const BULK_PATH = "/v1/posts/bulk";

/** The rows of either form: CSV rows numbered as a spreadsheet shows them, JSON posts from 1. */
export function bulkEntries(body: string | { posts: unknown[] }): BulkEntry[] {
  if (typeof body === "string") return csvEntries(body);
  if (!body.posts.length) throw noPosts();
  if (body.posts.length > MAX_BULK_POSTS) throw tooMany(body.posts.length);
  return body.posts.map((post, i) => ({ row: i + 1, body: post }));
}

export function bulkPostsRoutes(ctx: AppContext) {
  // 1,000 posts of a dozen values each are more than one ordinary body may hold.
  allowBody(BULK_PATH, { csv: true, maxJsonValues: Math.max(MAX_JSON_VALUES, MAX_BULK_POSTS * 60) });
  return new Elysia({ name: "posts-bulk", detail: { tags: ["Posts"] } }).use(auth(ctx)).post(
    BULK_PATH,
    async ({ principal, body, query, headers, set, request }) => {
      const lenient = handlingPreference(request) === "lenient";
      if (lenient) Object.assign(set.headers, LENIENT_APPLIED);
      const data = await runBulk(ctx, principal.profileId, bulkEntries(body), {
        dryRun: query.dry_run === true,
        key: headers["idempotency-key"],
        lenient,
      });
      return { data };
    },
    {
      scope: "posts:write",
      body: BulkPostsBody,
      query: BulkQuery,
      headers: IdempotencyHeader,
      response: { 200: Data(BulkResult), ...errors(400, 413) },
      detail: {
        summary: "Import many posts (JSON or CSV), or check them with a dry run",
        description:
          `Extension: takes up to ${MAX_BULK_POSTS} posts, as JSON ({"posts": [<the body of POST /v1/posts>, …]}) or as text/csv with a header row (BulkPostsCsv describes the columns). ` +
          "With dry_run=true every row is checked as POST /v1/posts/validate checks a post (the schema too: a row that breaks it is that row's problem, not a 400) and nothing is created. " +
          "Without it each row that passes is created as POST /v1/posts would create it, with the idempotency key `<Idempotency-Key>:<row>`. " +
          "Without an Idempotency-Key header a row's key is `bulk-<SHA-256 of the row's post body>` (its JSON with keys sorted; a CSV row is first made into that body), so the same post is never created twice " +
          "however often it is sent, in whatever file or part, and a file fixed after an import with failed rows creates only those rows. Two identical rows in one import are one post. " +
          "To post the same content again later, send an Idempotency-Key of your own. " +
          "Row keys share the namespace of POST /v1/posts keys: a row can be sent again alone with its key. " +
          "A row whose key created a post before is answered with that post (ok, replayed: true, nothing new); with a different body the row gets the problem idempotency_conflict. " +
          "Rows are numbered as the file shows them: CSV rows as a spreadsheet does (the header is row 1, the first post row 2), JSON posts from 1. " +
          "Rows that fail never stop the others: the answer is 200 with every row's post id or problems and the counts (check failed); " +
          "a 400 is only for the request as a whole: too_many_posts, no_posts, invalid_csv, unknown_csv_columns, missing_csv_columns, duplicate_csv_column, or a JSON body without posts. " +
          "The body is capped at MAX_BODY_BYTES like every body (crier posts import sends a file in parts of 50 rows). " +
          "The whole import counts as one request against the key's rate limit. " +
          LENIENT_NOTE,
      },
    },
  );
}
