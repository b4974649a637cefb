import type { Plugin } from "../platform/sdk.ts";
import { ErrorBody } from "./model.ts";
import { hoistNamedSchemas } from "./openapi-components.ts";
import { describePlatformOptions } from "./openapi-platforms.ts";

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

interface Operation {
  "x-scope"?: string;
  security?: unknown[];
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, unknown>; required?: boolean; description?: string };
}
interface RouteInfo {
  method: string;
  path: string;
  hooks: { body?: unknown };
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

/**
 * Completes the generated description where the generator cannot see what our shared hooks do:
 * - every operation that declares a scope (x-scope, set by the `scope` macro) can answer 401, 403 and 429;
 * - JSON bodies are read by the envelope's own size-capped parser, which hides their media type from
 *   the generator, so the route's body schema is put back under application/json (and a union member
 *   with a contentMediaType under that type: bulk import's text/csv);
 * - an operation without a key (health, docs, OAuth callback) says so with `security: []`.
 */
export function finishOpenApi<T>(doc: T, routes: RouteInfo[]): T {
  const paths = (doc as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
  const bodies = new Map(
    routes
      .filter((r) => r.hooks?.body)
      .map((r) => [`${r.method.toLowerCase()} ${toOpenApiPath(r.path)}`, r.hooks.body]),
  );
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== "object") continue;
      const body = bodies.get(`${method} ${path}`);
      if (op.requestBody && body && Object.keys(op.requestBody.content ?? {}).length === 0) {
        op.requestBody.content = bodyContent(body as Schema);
      }
      if (!op["x-scope"]) {
        op.security ??= [];
        continue;
      }
      op.responses ??= {};
      op.responses["401"] ??= errorResponse(
        "invalid_api_key: the key is missing, malformed, unknown, revoked or expired",
      );
      op.responses["403"] ??= errorResponse(`missing_scope: the key lacks the '${op["x-scope"]}' scope`);
      op.responses["429"] ??= errorResponse(
        "rate_limited: the key made more than RATE_LIMIT_PER_MINUTE requests in a minute; wait Retry-After seconds",
      );
    }
  }
  return doc;
}

type Schema = { anyOf?: Schema[]; contentMediaType?: unknown };

/**
 * A body's media types: application/json, and for a route that also takes another type (bulk import's
 * text/csv) each union member marked with contentMediaType under its own type.
 */
function bodyContent(body: Schema): Record<string, { schema: unknown }> {
  const typed = (body.anyOf ?? []).filter((m) => typeof m.contentMediaType === "string");
  if (!typed.length) return { "application/json": { schema: body } };
  const json = body.anyOf!.filter((m) => !typed.includes(m));
  const content: Record<string, { schema: unknown }> = {};
  if (json.length) content["application/json"] = { schema: json.length === 1 ? json[0] : { ...body, anyOf: json } };
  for (const m of typed) content[m.contentMediaType as string] = { schema: m };
  return content;
}

/**
 * The description /openapi.json serves, from the generator's output: completed (finishOpenApi), every
 * plugin's options linked, and shared schemas named in components. Works on a copy: the generator's
 * objects are the live TypeBox schemas the validators use.
 */
export function finishDescription(
  generated: unknown,
  routes: RouteInfo[],
  plugins: Pick<Plugin, "platform" | "displayName" | "optionsSchema">[],
): Record<string, unknown> {
  const doc = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
  finishOpenApi(doc, routes);
  describePlatformOptions(doc, plugins);
  hoistNamedSchemas(doc);
  return doc;
}
