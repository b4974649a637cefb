/**
 * A uuid[] literal to bind as one text parameter (`${uuidArray(ids)}::uuid[]`): one placeholder however
 * many ids, so a prepared statement keeps one shape. The ids are uuids (from the database or validated
 * by the API), so they need no quoting.
 */
export function uuidArray(ids: readonly string[]): string {
  return `{${ids.join(",")}}`;
}
