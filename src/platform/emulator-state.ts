/**
 * An emulator's state as one JSON document, so the host can keep a sandbox emulator's accounts, tokens
 * and posts in the database (src/platform/host/sandbox-state.ts) while the emulator itself keeps working
 * on plain in-memory objects: one code path for tests (memory only) and sandbox profiles (persisted).
 */

/** A piece of state that is not a plain data object (OAuthServer, AuthorizationCodes). */
export interface StatePart {
  snapshot(): unknown;
  restore(saved: unknown): void;
}

/** What the host saves and loads; Emulator.state. */
export interface EmulatorState {
  /** The whole state as JSON text; equal text means nothing changed. */
  snapshot(): string;
  /** Replaces the state with a snapshot (one another copy may have saved). */
  restore(doc: string): void;
}

/**
 * Media bytes larger than this are left out of the document (as `null`, what emulators already hold for
 * evicted media): every call rewrites the document, so it keeps what was posted, not the media bytes.
 */
export const MAX_PERSISTED_BYTES = 16 * 1024;

const isPart = (v: unknown): v is StatePart =>
  typeof v === "object" && v !== null && typeof (v as StatePart).snapshot === "function";

/** JSON that keeps Map, Set, Date, byte arrays and Infinity (tagged objects with a single `$`-key). */
export function encodeState(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    // Date and Buffer have toJSON: look at the value before it ran.
    const raw = this[key];
    if (raw instanceof Map) return { $map: [...raw] };
    if (raw instanceof Set) return { $set: [...raw] };
    if (raw instanceof Date) return { $date: raw.getTime() };
    if (raw === Infinity) return { $inf: 1 };
    if (raw instanceof Uint8Array)
      return { $bytes: raw.byteLength <= MAX_PERSISTED_BYTES ? Buffer.from(raw).toString("base64") : null };
    return v;
  });
}

export function decodeState(doc: string): unknown {
  return JSON.parse(doc, (_key, v) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const keys = Object.keys(v);
    if (keys.length !== 1) return v;
    if (keys[0] === "$map") return new Map(v.$map);
    if (keys[0] === "$set") return new Set(v.$set);
    if (keys[0] === "$date") return new Date(v.$date);
    if (keys[0] === "$inf") return Infinity;
    if (keys[0] === "$bytes") return v.$bytes === null ? null : new Uint8Array(Buffer.from(v.$bytes, "base64"));
    return v;
  });
}

/**
 * The state of an emulator made of named parts: plain objects (such as `resettable()` state, restored
 * field by field so closures holding the object see the new values) and StateParts.
 */
export function emulatorState(parts: Record<string, object>): EmulatorState {
  return {
    snapshot: () =>
      encodeState(Object.fromEntries(Object.entries(parts).map(([k, p]) => [k, isPart(p) ? p.snapshot() : p]))),
    restore(doc) {
      const saved = decodeState(doc) as Record<string, unknown>;
      for (const [k, p] of Object.entries(parts)) {
        if (!(k in saved)) continue;
        if (isPart(p)) p.restore(saved[k]);
        else Object.assign(p, saved[k]);
      }
    },
  };
}
