import type { LogLevel } from "./config.ts";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/**
 * drizzle puts every parameter of a failed query into the error's message (and so its stack): post
 * content, key hashes, tokens. Logs keep the SQL and drop the parameters, whoever logs the error.
 */
const QUERY_PARAMS = /\nparams: [\s\S]*?(?=\n\s+at |$)/;

export function withoutQueryParams(text: string): string {
  return text.replace(QUERY_PARAMS, "\nparams: [not logged]");
}

function redact(fields: Record<string, unknown> | undefined) {
  if (!fields) return fields;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = typeof v === "string" ? withoutQueryParams(v) : v;
  return out;
}

/** JSON lines on stdout (stderr for warn and error), one object per event. */
export function createLogger(
  level: LogLevel,
  base: Record<string, unknown> = {},
  sink?: (line: string, level: LogLevel) => void,
): Logger {
  const write =
    sink ??
    ((line: string, lvl: LogLevel) => (ORDER[lvl] >= ORDER.warn ? process.stderr : process.stdout).write(line + "\n"));
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...redact(fields) }), lvl);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

/**
 * Log fields for a caught error: its message, and what the database said when it is a failed query
 * (drizzle's own message is only "Failed query: …"; the driver's error, a deadlock or a lost
 * connection, is its cause).
 */
export function errorFields(e: unknown): { error: string; cause?: string } {
  const message = (e as Error)?.message ?? String(e);
  const cause = (e as { cause?: unknown })?.cause;
  return cause instanceof Error ? { error: message, cause: cause.message } : { error: message };
}
