import type { Db } from "../../db/client.ts";
import { notifiedCache, type NotifiedCache } from "../../db/notified-cache.ts";

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
export const KEY_CHANGED_CHANNEL = "crier_api_key_changed";

/** This copy's cache of key hash → principal (src/db/notified-cache.ts). */
export function principalCache<P>(db: Db): NotifiedCache<CachedKey<P>> {
  return notifiedCache<CachedKey<P>>(db, KEY_CHANGED_CHANNEL, KEY_CACHE_TTL_MS);
}
