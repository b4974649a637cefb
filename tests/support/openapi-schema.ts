/**
 * Requests made from the app's own OpenAPI description, so suites that walk every operation cover a new
 * route the day it is added: the operations, a minimal valid instance of a schema, and fast-check
 * arbitraries of valid-looking and hostile values.
 */
import fc from "fast-check";

type Schema = Record<string, any>;

export interface Operation {
  method: string;
  /** The OpenAPI path, e.g. /v1/posts/{id}/targets/{targetId}. */
  path: string;
  pathParams: string[];
  query: { name: string; schema: Schema; required: boolean }[];
  body?: Schema;
  scope?: string;
}

export function operations(spec: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(spec.paths ?? {})) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (!["get", "post", "put", "patch", "delete", "head"].includes(method)) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Schema) => resolve(spec, p));
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]),
        query: params
          .filter((p: Schema) => p.in === "query")
          .map((p: Schema) => ({ name: p.name, schema: resolve(spec, p.schema ?? {}), required: !!p.required })),
        body: op.requestBody
          ? resolve(spec, resolve(spec, op.requestBody).content?.["application/json"]?.schema)
          : undefined,
        scope: op["x-scope"],
      });
    }
  }
  return out;
}

/** Follows a local $ref (#/components/...) until the schema is not one. */
export function resolve(spec: Schema, schema: Schema | undefined): Schema {
  let s = schema ?? {};
  for (let i = 0; i < 20 && typeof s.$ref === "string"; i++) {
    s = s.$ref
      .replace(/^#\//, "")
      .split("/")
      .reduce((o: Schema, k: string) => o?.[k.replace(/~1/g, "/").replace(/~0/g, "~")], spec);
  }
  return s ?? {};
}

const FAR_FUTURE = "2099-01-01T00:00:00Z";
const SAFE_URL = "https://127.0.0.1:9/file.png";

function stringFor(s: Schema): string {
  if (s.format === "uuid") return crypto.randomUUID();
  if (s.format === "date-time") return FAR_FUTURE;
  if (s.format === "uri" || s.format === "url") return SAFE_URL;
  if (s.pattern) return "";
  return "x".repeat(Math.max(1, s.minLength ?? 1));
}

/** The smallest instance a validator accepts: required properties only, first alternatives, minimum sizes. */
export function minimal(spec: Schema, schema: Schema | undefined): unknown {
  const s = resolve(spec, schema);
  if ("const" in s) return s.const;
  if (s.enum) return s.enum[0];
  if ("default" in s) return s.default;
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) {
    const notNull = alternatives.find((a: Schema) => resolve(spec, a).type !== "null");
    return minimal(spec, notNull ?? alternatives[0]);
  }
  switch (s.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? []) out[key] = minimal(spec, s.properties?.[key]);
      return out;
    }
    case "array":
      return Array.from({ length: s.minItems ?? 0 }, () => minimal(spec, s.items));
    case "integer":
    case "number":
      return s.minimum ?? 1;
    case "boolean":
      return true;
    case "null":
      return null;
    case "string":
      return stringFor(s);
    default:
      return {};
  }
}

const hostileString = fc.constantFrom(
  "",
  "\u0000",
  "__proto__",
  "constructor",
  "0000-01-01T00:00:00Z",
  "+275760-09-13T00:00:00Z",
  "2030-02-30T10:00:00Z",
  "x".repeat(5000),
  "😀".repeat(300),
  "'; drop table posts; --",
  "%00",
  "../../etc/passwd",
);

/** Values a schema describes, with hostile ones mixed in: wrong types, edge strings, extra properties. */
export function arbitrary(spec: Schema, schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(spec, schema);
  const garbage = depth > 3 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  return fc.oneof({ weight: 6, arbitrary: shaped(spec, s, depth) }, { weight: 1, arbitrary: garbage });
}

function shaped(spec: Schema, s: Schema, depth: number): fc.Arbitrary<unknown> {
  if ("const" in s) return fc.constant(s.const);
  if (s.enum) return fc.oneof(fc.constantFrom(...s.enum), hostileString);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((a: Schema) => arbitrary(spec, a, depth + 1)));
  switch (s.type) {
    case "object": {
      if (depth > 4) return fc.constant({});
      const props = Object.fromEntries(
        Object.entries<Schema>(s.properties ?? {}).map(([k, v]) => [k, arbitrary(spec, v, depth + 1)]),
      );
      const record = fc.record(props, { requiredKeys: (s.required ?? []).filter((k: string) => k in props) });
      return fc.oneof(
        { weight: 5, arbitrary: record },
        { weight: 1, arbitrary: record.map((r) => ({ ...(r as object), unexpected_field: 1 })) },
      );
    }
    case "array":
      return fc.array(arbitrary(spec, s.items, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) });
    case "integer":
      return fc.oneof(
        fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 }),
        fc.constantFrom(-1, 0, 2 ** 31, Number.MAX_SAFE_INTEGER, 1.5),
      );
    case "number":
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(-1, 0, 1e308));
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "string":
      return fc.oneof(
        { weight: 3, arbitrary: fc.constant(null).map(() => stringFor(s)) },
        { weight: 2, arbitrary: fc.string({ maxLength: Math.min(s.maxLength ?? 40, 40) }) },
        { weight: 2, arbitrary: hostileString },
        ...(s.format === "date-time"
          ? [{ weight: 2, arbitrary: fc.date().map((d) => (Number.isNaN(d.getTime()) ? "" : d.toISOString())) }]
          : []),
      );
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Query strings for an operation: each parameter present or not, valid-looking or hostile. */
export function queryArbitrary(spec: Schema, op: Operation): fc.Arbitrary<string> {
  const parts = op.query.map((q) =>
    fc.option(
      arbitrary(spec, q.schema).map(
        (v) => `${encodeURIComponent(q.name)}=${encodeURIComponent(typeof v === "string" ? v : JSON.stringify(v))}`,
      ),
      { nil: undefined },
    ),
  );
  return fc.tuple(...parts).map((ps) => {
    const present = ps.filter((p): p is string => p !== undefined);
    return present.length ? `?${present.join("&")}` : "";
  });
}
