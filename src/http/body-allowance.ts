/**
 * Routes whose bodies go beyond the API's default (JSON only, at most MAX_JSON_VALUES values): a route
 * registers its path with what it also takes, and the envelope reads its body accordingly. The byte cap
 * (MAX_BODY_BYTES) is the same for every route.
 */
import { MAX_JSON_VALUES } from "./json-guard.ts";

export interface BodyAllowance {
  /** A text/csv body is read as text and handed to the route as a string. */
  csv?: boolean;
  /** More object members and array items than MAX_JSON_VALUES (a bulk import's many posts). */
  maxJsonValues?: number;
}

const allowances = new Map<string, BodyAllowance>();

/** Called by a route's module when it builds the route: `path` is the request path, without a query. */
export function allowBody(path: string, allowance: BodyAllowance): void {
  allowances.set(path, allowance);
}

export function bodyAllowance(path: string): Required<BodyAllowance> {
  const a = allowances.get(path);
  return { csv: a?.csv ?? false, maxJsonValues: a?.maxJsonValues ?? MAX_JSON_VALUES };
}

export const isCsv = (contentType?: string) => /^text\/csv\b/i.test(contentType ?? "");
