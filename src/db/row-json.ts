import { getTableColumns, type Column, type InferSelectModel, type Table } from "drizzle-orm";

/**
 * A row that SQL returned as `to_jsonb(row)` (snake_case keys, timestamps as ISO text), read back into
 * what drizzle's select gives for the same table: each column's own driver mapping, so a schema change
 * reaches both readings at once.
 */
export function rowFromJson<T extends Table>(table: T, json: Record<string, unknown>): InferSelectModel<T> {
  const row: Record<string, unknown> = {};
  for (const [key, column] of columnsOf(table)) {
    const value = json[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as InferSelectModel<T>;
}

/** The columns of a table as entries, listed once per table: the engine reads two rows per publish. */
function columnsOf(table: Table): [string, Column][] {
  let entries = columnEntries.get(table);
  if (!entries) columnEntries.set(table, (entries = Object.entries(getTableColumns(table))));
  return entries;
}
const columnEntries = new WeakMap<Table, [string, Column][]>();
