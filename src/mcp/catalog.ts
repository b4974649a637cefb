/**
 * Tools made from the app's own routes: the input schema is the route's TypeBox params, query and body
 * (the same objects the route validates with and the OpenAPI document shows), and a call is a request
 * to that route with the caller's bearer key, so scopes, validation, errors and Idempotency-Key are the
 * REST API's own.
 */
import { TOOLS, type ToolDeclaration } from "./tools.ts";

/** What a route exposes of itself (Elysia's app.routes entries). */
export interface RouteInfo {
  method: string;
  path: string;
  hooks?: {
    body?: JsonSchema;
    query?: JsonSchema;
    params?: JsonSchema;
    headers?: JsonSchema;
    detail?: { summary?: string; "x-scope"?: string };
  };
}

type JsonSchema = { type?: string; properties?: Record<string, unknown>; required?: string[]; [k: string]: unknown };

export interface Tool {
  decl: ToolDeclaration;
  scope: string;
  inputSchema: {
    type: "object";
    properties: Record<string, unknown>;
    required?: string[];
    additionalProperties?: boolean;
  };
  /** Route parameter name → tool argument name (targetId → target_id). */
  pathArgs: [string, string][];
  queryArgs: string[];
  bodyArgs: string[] | "all";
  /** The route takes Idempotency-Key itself. */
  routeIdempotent: boolean;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export const IDEMPOTENCY_ARG = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  description:
    "Optional. The same key with the same arguments returns the original result instead of acting twice; with other arguments it is an idempotency_conflict error. Keys are per profile and per tool.",
};

export const ON_LIMIT_ARG = {
  type: "string",
  enum: ["reject", "fit"],
  default: "fit",
  description:
    "What to do when a platform cannot take the post as given: fit (default) cuts text at a word boundary, drops surplus or refused media and removes hashtags past the cap, reporting each change as adjustments; reject answers the problem instead.",
};

function toolFrom(decl: ToolDeclaration, route: RouteInfo): Tool {
  const hooks = route.hooks ?? {};
  const scope = hooks.detail?.["x-scope"];
  if (!scope) throw new Error(`route ${route.method} ${route.path} of tool ${decl.name} has no scope`);
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const pathArgs: [string, string][] = [];
  for (const [name, schema] of Object.entries(hooks.params?.properties ?? {})) {
    const arg = snake(name);
    pathArgs.push([name, arg]);
    properties[arg] = schema;
    required.push(arg);
  }
  const queryArgs = Object.keys(hooks.query?.properties ?? {});
  Object.assign(properties, hooks.query?.properties);
  required.push(...(hooks.query?.required ?? []));
  let bodyArgs: string[] | "all" = [];
  let closed = false;
  // A body that may also be sent as another media type (bulk import's CSV) is the tool's in its JSON form.
  const body = jsonForm(hooks.body);
  if (body) {
    if (body.type === "object" && body.properties) {
      bodyArgs = Object.keys(body.properties);
      Object.assign(properties, body.properties);
      required.push(...(body.required ?? []));
      closed = body.additionalProperties === false;
    } else {
      bodyArgs = "all";
      properties.body = body;
      required.push("body");
    }
  }
  const mutating = decl.kind !== "read";
  if (mutating) properties.idempotency_key = IDEMPOTENCY_ARG;
  if (decl.onLimit) properties.on_limit = ON_LIMIT_ARG;
  return {
    decl,
    scope,
    inputSchema: {
      type: "object",
      properties,
      ...(required.length ? { required } : {}),
      ...(closed ? { additionalProperties: false } : {}),
    },
    pathArgs,
    queryArgs,
    bodyArgs,
    routeIdempotent: Boolean((hooks.headers?.properties as Record<string, unknown> | undefined)?.["idempotency-key"]),
  };
}

/** The body schema without its union members of another media type (marked with contentMediaType). */
function jsonForm(body: JsonSchema | undefined): JsonSchema | undefined {
  const members = body?.anyOf as JsonSchema[] | undefined;
  if (!Array.isArray(members) || !members.some((m) => typeof m.contentMediaType === "string")) return body;
  const json = members.filter((m) => typeof m.contentMediaType !== "string");
  return json.length === 1 ? json[0] : { ...body, anyOf: json };
}

/** Every tool, from the routes of the app; throws when a declared route does not exist (a test catches it). */
export function buildTools(routes: RouteInfo[]): Tool[] {
  return TOOLS.map((decl) => {
    const route = routes.find((r) => r.method === decl.method && r.path === decl.path);
    if (!route) throw new Error(`tool ${decl.name}: no route ${decl.method} ${decl.path}`);
    return toolFrom(decl, route);
  });
}

/** The REST request a tool call makes (without its authorization). */
export function requestFor(tool: Tool, args: Record<string, unknown>) {
  let path = tool.decl.path;
  for (const [name, arg] of tool.pathArgs) path = path.replace(`:${name}`, encodeURIComponent(String(args[arg] ?? "")));
  const query = new URLSearchParams();
  for (const name of tool.queryArgs) if (args[name] !== undefined) query.set(name, String(args[name]));
  let body: unknown;
  if (tool.bodyArgs === "all") body = args.body;
  else if (tool.bodyArgs.length || tool.inputSchema.additionalProperties === false) {
    const known = new Set([...tool.pathArgs.map(([, a]) => a), ...tool.queryArgs, "idempotency_key", "on_limit"]);
    // Everything that is not a path, query or idempotency argument goes to the body, so the route
    // refuses unknown fields exactly as it does over REST.
    body = Object.fromEntries(Object.entries(args).filter(([k]) => !known.has(k)));
  }
  const qs = query.toString();
  return { method: tool.decl.method, path: qs ? `${path}?${qs}` : path, body };
}
