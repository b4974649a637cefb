import { ErrorBody } from "./model.ts";

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/**
 * Adds the 401 and 403 answers to every operation that declares a scope (x-scope, set by the `scope`
 * macro), so the description lists what the auth layer can answer without each route repeating it.
 */
export function withAuthErrors<T>(doc: T): T {
  const paths = (doc as { paths?: Record<string, Record<string, { "x-scope"?: string; responses?: Record<string, unknown> }>> }).paths ?? {};
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== "object" || !op["x-scope"]) continue;
      op.responses ??= {};
      op.responses["401"] ??= errorResponse("invalid_api_key: the key is missing, malformed, unknown, revoked or expired");
      op.responses["403"] ??= errorResponse(`missing_scope: the key lacks the '${op["x-scope"]}' scope`);
    }
  }
  return doc;
}
