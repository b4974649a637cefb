/**
 * Limits a JSON body must meet before it is parsed or validated. JSON.parse of a hostile body is cheap;
 * what is not is what follows: schema validation and its error formatting recurse once per level and
 * allocate per value, so 20,000 nested objects took seconds and gigabytes and 100,000 nested arrays
 * overflowed the stack (bench/hostile-json.ts measures it). A linear scan of the raw text is enough to
 * refuse such bodies in well under a millisecond per kilobyte.
 */
import { BadRequest } from "./errors.ts";

/** Deepest nesting of objects and arrays a body may have; the API's own bodies need fewer than 8. */
export const MAX_JSON_DEPTH = 32;
/** Most object members and array items, counted together over the whole body, one body may hold. */
export const MAX_JSON_VALUES = 10_000;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const HINT = "Send a JSON document with Content-Type: application/json.";

/**
 * Throws 400 invalid_json when the text nests deeper than MAX_JSON_DEPTH or holds more than
 * `maxValues` values (MAX_JSON_VALUES unless the route allows more: body-allowance.ts). Brackets inside strings do not count; the text need not be valid JSON
 * (JSON.parse judges that afterwards).
 */
export function checkJsonShape(text: string, maxValues = MAX_JSON_VALUES): void {
  let depth = 0;
  let values = 0;
  let inString = false;
  // Just after an opening bracket: the next token other than whitespace is its first item, unless it closes it.
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (opened && c > 0x20) {
      opened = false;
      if (c !== CLOSE_OBJECT && c !== CLOSE_ARRAY) values++;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH)
        throw new BadRequest("invalid_json", `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, HINT);
      opened = true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
    else if (c === COMMA) values++;
    if (values > maxValues)
      throw new BadRequest(
        "invalid_json",
        `The request body holds more than ${maxValues} values (object members and array items).`,
        HINT,
      );
  }
}

/**
 * Where a parsed body holds a NUL character (U+0000), as a field path ("body.targets.0.content_override"),
 * or undefined. PostgreSQL cannot store NUL in text or jsonb, so such a string is refused for every field
 * of every route, keys included. Called after checkJsonShape, so the recursion is bounded.
 */
export function findNul(value: unknown, path = "body"): string | undefined {
  if (typeof value === "string") return value.includes("\0") ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], `${path}.${i}`);
      if (hit) return hit;
    }
    return undefined;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes("\0")) return `${path} (a property name)`;
      const hit = findNul(v, `${path}.${k}`);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** The 400 for a NUL character in the named field. */
export function nulError(field: string): BadRequest {
  return new BadRequest(
    "validation_error",
    `${field}: must not contain the NUL character (U+0000).`,
    "Remove the NUL character (\\u0000) from the field; text is stored as UTF-8 without it.",
  );
}
