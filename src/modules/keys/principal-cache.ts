import type { Db } from "../../db/client.ts";

/** What a key hash resolves to, with the key's own expiry so an expired key is refused without a query. */
export interface CachedKey<P> {
  principal: P;
  expiresAt: Date | null;
}

/**
 * Seconds a resolved key is trusted without reading it again. Changes to a key reach every copy at once by
 * NOTIFY (migration 0014's trigger on api_keys); the TTL only bounds what a lost notification can cost.
 */
export const KEY_CACHE_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;
export const KEY_CHANGED_CHANNEL = "crier_api_key_changed";

interface Entry<P> extends CachedKey<P> {
  until: number;
}

/**
 * An in-process cache of key hash → principal, one per database handle. Nothing is cached until the
 * LISTEN for key changes is in place, and a (re)connected listener starts from an empty cache, so a
 * notification missed while it was down cannot leave a revoked key trusted.
 */
export class PrincipalCache<P> {
  private entries = new Map<string, Entry<P>>();
  private listening = false;
  /** Bumped by every change heard of: a lookup that straddles a change must not cache what it read. */
  private changes = 0;

  constructor(db: Db) {
    db.listen(
      KEY_CHANGED_CHANNEL,
      (hash) => this.forget(hash),
      () => {
        this.changes++;
        this.entries.clear();
        this.listening = true;
      },
    ).catch(() => {
      // Without notifications the cache stays off: every request reads the key, as before.
      this.listening = false;
    });
  }

  get(hash: string, now: number): CachedKey<P> | undefined {
    const hit = this.entries.get(hash);
    if (!hit) return undefined;
    if (hit.until > now) return hit;
    this.entries.delete(hash);
    return undefined;
  }

  /** Taken before reading a key; `set` ignores the read when a change came in meanwhile. */
  version(): number {
    return this.changes;
  }

  set(hash: string, value: CachedKey<P>, now: number, readAt: number): void {
    if (!this.listening || readAt !== this.changes) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, { ...value, until: now + KEY_CACHE_TTL_MS });
  }

  /** Forgets one key in this copy at once (the trigger's NOTIFY tells the other copies). */
  forget(hash: string): void {
    this.changes++;
    this.entries.delete(hash);
  }
}

const caches = new WeakMap<Db, PrincipalCache<unknown>>();

export function principalCache<P>(db: Db): PrincipalCache<P> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new PrincipalCache<unknown>(db)));
  return cache as PrincipalCache<P>;
}
