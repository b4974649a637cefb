/**
 * Bodies where unknown keys are ignored instead of refused. Clients of the upstream service send their
 * own bookkeeping keys on posts (duplicateKey, origin, a target's username or status) and the upstream
 * ignores them; Crier does the same on the routes that opt in, so those clients work unchanged. What was
 * dropped is named in the Crier-Ignored-Fields header, so a misspelt key is never silent to whoever looks.
 * Declared keys are still validated as strictly as before: only names the schema does not know are dropped.
 */
import type { TSchema } from "@sinclair/typebox";

export const IGNORED_FIELDS_HEADER = "crier-ignored-fields";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function propertiesOf(schema: TSchema): Record<string, TSchema> | null {
  return isObject(schema.properties) ? (schema.properties as Record<string, TSchema>) : null;
}

/** The object schema of an array property's items, when the property is an array of objects. */
function itemObject(schema: TSchema | undefined): TSchema | null {
  if (!schema) return null;
  if (schema.type === "array" && isObject(schema.items) && propertiesOf(schema.items as TSchema))
    return schema.items as TSchema;
  return null;
}

/**
 * Removes from `body` (in place) the keys `schema` does not declare, at the top level and in the items of
 * the array properties named in `nested`, and returns their names as `key` and `array[].key`.
 * A body that is not an object is left to validation.
 */
export function dropUnknownKeys(body: unknown, schema: TSchema, nested: readonly string[] = []): string[] {
  const known = propertiesOf(schema);
  if (!isObject(body) || !known) return [];
  const dropped = new Set<string>();
  for (const key of Object.keys(body))
    if (!Object.hasOwn(known, key)) {
      delete body[key];
      dropped.add(key);
    }
  for (const name of nested) {
    const items = itemObject(known[name]);
    const list = body[name];
    if (!items || !Array.isArray(list)) continue;
    for (const key of list.flatMap((item) => dropUnknownKeys(item, items))) dropped.add(`${name}[].${key}`);
  }
  return [...dropped];
}

/**
 * A route's transform hook that ignores unknown keys of its body (and of the items of `nested` arrays)
 * and names them in the Crier-Ignored-Fields response header.
 */
export function ignoreUnknownKeys(schema: TSchema, nested: readonly string[] = []) {
  return ({ body, set }: { body: unknown; set: { headers: Record<string, string | number> } }) => {
    const dropped = dropUnknownKeys(body, schema, nested);
    if (dropped.length) set.headers[IGNORED_FIELDS_HEADER] = dropped.join(", ");
  };
}

export const IGNORED_FIELDS_NOTE =
  "Keys the body does not declare (at its top level and in targets[]) are ignored, as the upstream service ignores them: " +
  "they are neither stored nor echoed, and the Crier-Ignored-Fields response header names them (targets[].username, for one). " +
  "origin cannot be set by a client. Declared keys with a wrong type or value are still 400 validation_error.";
