import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure } from "./api.ts";
import type { PostValidation, Problem } from "./types.ts";

/** How long typing must pause before the post is checked again. */
const DEBOUNCE_MS = 400;

export interface Validation {
  /** The body this answer is about (as JSON): an answer for an older body is stale. */
  key: string;
  data?: PostValidation;
  error?: unknown;
}

/**
 * Checks the body Compose would send through POST /v1/posts/validate while the user edits: once typing
 * pauses, and only when a target is picked (without one there is nothing to check against). An answer
 * that arrives after the body changed again is dropped.
 */
export function useValidation(body: { targets: unknown[] }): { result: Validation | null; current: boolean } {
  const key = JSON.stringify(body);
  const latest = useRef(key);
  const [result, setResult] = useState<Validation | null>(null);
  latest.current = key;

  useEffect(() => {
    if (!body.targets.length) {
      setResult(null);
      return;
    }
    const timer = setTimeout(() => {
      api<{ data: PostValidation }>("POST", "/v1/posts/validate", body).then(
        (r) => latest.current === key && setResult({ key, data: r.data }),
        (error) => latest.current === key && setResult({ key, error }),
      );
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [key]);

  return { result, current: result?.key === key };
}

/** The API names targets as "targets[2] (…): …"; beside the target itself, that prefix says nothing more. */
export const withoutTargetPrefix = (message: string) => {
  const rest = message.replace(/^targets\[\d+\] \([^)]*\): /, "");
  return rest.charAt(0).toUpperCase() + rest.slice(1);
};

/** Problems found by validate, each with its message and hint; data-code carries the API's code. */
export function ProblemList({ problems, label }: { problems: Problem[]; label: string }) {
  if (!problems.length) return null;
  return (
    <ul class="problems" aria-label={label}>
      {problems.map((p, i) => (
        <li key={`${p.code}-${p.field}-${i}`} class="problem" data-code={p.code} data-field={p.field}>
          <strong>{withoutTargetPrefix(p.message)}</strong>
          {p.hint ? <span class="hint">{p.hint}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** A validate call the API refused outright (e.g. a body that breaks the schema) reads like a problem. */
export const refusal = (error: unknown): Problem[] =>
  error instanceof ApiFailure
    ? [{ code: error.code, message: error.message, hint: error.hint ?? "", field: "" }]
    : error
      ? [{ code: "network_error", message: String((error as Error).message ?? error), hint: "", field: "" }]
      : [];
