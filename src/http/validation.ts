import type { ValidationError } from "elysia";
import { ApiError, BadRequest, NotFound } from "./errors.ts";

type Schema = Record<string, unknown> & {
  anyOf?: Schema[];
  const?: unknown;
  type?: string | string[];
  format?: string;
  "x-error-code"?: string;
  "x-error-message"?: string;
  "x-error-hint"?: string;
};

interface SchemaIssue {
  path?: string;
  message?: string;
  summary?: string;
  value?: unknown;
  schema?: Schema;
}

const HINT = "Fix the named field and send the request again; /openapi.json describes every field.";

/**
 * Turns a schema failure into our 400. A schema may carry `x-error-code` (and `x-error-message`,
 * `x-error-hint`) when the spec names the code for that field, e.g. invalid_filename; otherwise it is
 * validation_error, and the message says which field, what was wrong and what is allowed.
 */
export function validationToApiError(err: ValidationError, request?: Request): ApiError {
  const issues = (err.all ?? []) as SchemaIssue[];
  // An id that cannot exist is not found like one that does not: a client need not tell the two apart.
  if (err.type === "params" && request) return new NotFound(recordName(new URL(request.url).pathname, issues));
  let where: string = err.type;
  if (where === "property") {
    // Elysia checks query parameters one by one and loses the name; find it from the URL.
    where = "query";
    const params = request ? [...new URL(request.url).searchParams] : [];
    const hit = params.find(([, v]) => v === String(err.value) || Number(v) === err.value);
    if (hit && issues[0]) issues[0].path = `/${hit[0]}`;
  }
  const coded = issues.find((i) => i.schema?.["x-error-code"]);
  if (coded?.schema?.["x-error-code"]) {
    return new BadRequest(
      coded.schema["x-error-code"],
      coded.schema["x-error-message"] ?? `${fieldName(where, coded.path)} ${describeIssue(coded)}`,
      coded.schema["x-error-hint"],
    );
  }
  const first = issues[0];
  if (!first) return new BadRequest("validation_error", `The ${where} is invalid.`, HINT);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : "";
  return new BadRequest("validation_error", `${fieldName(where, first.path)} ${describeIssue(first)}${more}`, HINT);
}

function fieldName(where: string, path?: string) {
  const dotted = (path ?? "").replace(/^\//, "").replace(/\//g, ".");
  return dotted ? `${where}.${dotted}` : where;
}

const FORMATS: Record<string, string> = {
  uuid: "a UUID",
  "date-time": "an ISO 8601 date-time with a time zone (2026-01-31T09:00:00Z)",
  date: "an ISO 8601 date (2026-01-31)",
  uri: "an absolute URL",
  email: "an email address",
};

const typeName = (schema: Schema): string => {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.format && FORMATS[schema.format]) return FORMATS[schema.format];
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : schema.type;
  if (type === "object") return "an object";
  if (type === "array") return "an array";
  if (type === "integer") return "an integer";
  return type ? `a ${type}` : "a valid value";
};

function describeNumber(schema: Schema, got: unknown): string {
  const kind = schema.type === "integer" ? "an integer" : "a number";
  const n = typeof got === "number" ? got : Number(got);
  if (got === undefined || got === null || got === "" || Number.isNaN(n)) return `must be ${kind}`;
  if (schema.type === "integer" && !Number.isInteger(n)) return `must be ${kind} (got ${n})`;
  const [min, max] = [schema.minimum as number | undefined, schema.maximum as number | undefined];
  const range =
    min !== undefined && max !== undefined
      ? `from ${min} to ${max}`
      : min !== undefined
        ? `at least ${min}`
        : `at most ${max}`;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) return `must be ${range} (got ${n})`;
  const [xmin, xmax] = [schema.exclusiveMinimum as number | undefined, schema.exclusiveMaximum as number | undefined];
  if (xmin !== undefined && n <= xmin) return `must be greater than ${xmin} (got ${n})`;
  if (xmax !== undefined && n >= xmax) return `must be less than ${xmax} (got ${n})`;
  return `must be ${kind}`;
}

/** What was wrong with one value and what is allowed there, as words after the field name. */
export function describeIssue(issue: SchemaIssue): string {
  const text = issue.message ?? issue.summary ?? "";
  const schema = issue.schema ?? {};
  if (/Expected kind 'Never'|Unexpected property/i.test(text)) return "is not an allowed property";
  if (/Expected required property/i.test(text)) return "is required";
  const options = schema.anyOf;
  const numeric = options?.find((o) => o.type === "integer" || o.type === "number");
  if (numeric && options?.every((o) => o === numeric || o.format === numeric.type)) {
    // Elysia accepts a number also as a numeric string here; what the client must fix is the number.
    return describeNumber({ ...schema, ...numeric }, issue.value);
  }
  if (options?.length) {
    const literals = options.filter((o) => o.const !== undefined).map((o) => String(o.const));
    const rest = options.filter((o) => o.const === undefined).map(typeName);
    if (literals.length && !rest.length) return `must be one of ${literals.join(", ")}`;
    const allowed = [...literals.map((l) => JSON.stringify(l)), ...rest];
    return `must be ${allowed.slice(0, -1).join(", ")}${allowed.length > 1 ? " or " : ""}${allowed.at(-1)}`;
  }
  const limit = (key: string) => schema[key] as number;
  const got = issue.value;
  if (/length (greater|less)|Expected array length/i.test(text) || /items/i.test(text)) {
    const unit = typeof got === "string" ? "characters" : "items";
    if (/greater/.test(text))
      return `must have at least ${limit(typeof got === "string" ? "minLength" : "minItems")} ${unit}`;
    if (/less/.test(text))
      return `must have at most ${limit(typeof got === "string" ? "maxLength" : "maxItems")} ${unit}`;
  }
  if (/to be (greater|less) (or equal|than)/i.test(text)) return describeNumber(schema, got);
  if (/unique/i.test(text)) return "must not repeat an item";
  if (/format/i.test(text) && schema.format) return `must be ${FORMATS[schema.format] ?? `in ${schema.format} format`}`;
  if (/pattern/i.test(text) && schema.pattern) return `must match the pattern ${String(schema.pattern)}`;
  if (/^Expected/.test(text) && schema.type) return `must be ${typeName(schema)}`;
  return text ? `is invalid: ${text.replace(/^Property '.*?' should be /, "should be ")}` : "is invalid";
}

/** "Post 'abc'" for /v1/posts/abc: the collection before the malformed segment names the record. */
function recordName(pathname: string, issues: SchemaIssue[]): string {
  const segments = pathname.split("/").map(decodeURIComponent);
  const value = String(issues[0]?.value ?? "");
  const at = segments.lastIndexOf(value);
  const collection = at > 0 ? segments[at - 1] : "";
  const noun = collection.replace(/s$/, "");
  return noun ? `${noun[0].toUpperCase()}${noun.slice(1)} '${value}'` : "Record";
}
