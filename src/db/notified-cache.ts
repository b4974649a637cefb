import type { Db } from "./client.ts";

interface Entry<V> {
  value: V;
  until: number;
}

/**
 * An in-process cache of rows a hot route reads on every request, one per database handle and channel.
 * A trigger NOTIFYs the channel with the key of a changed row, so every copy forgets it at once; the TTL
 * only bounds what a lost notification can cost. Nothing is cached until the LISTEN is in place, and a
 * (re)connected listener starts from an empty cache, so a notification missed while it was down cannot
 * leave a stale entry behind.
 */
export class NotifiedCache<V> {
  private entries = new Map<string, Entry<V>>();
  private listening = false;
  /** Bumped by every change heard of: a read that straddles a change must not cache what it read. */
  private changes = 0;

  constructor(
    db: Db,
    channel: string,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {
    db.listen(
      channel,
      (key) => this.forget(key),
      () => {
        this.changes++;
        this.entries.clear();
        this.listening = true;
      },
    ).catch(() => {
      // Without notifications the cache stays off: every request reads the database, as before.
      this.listening = false;
    });
  }

  get(key: string, now: number): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > now) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Taken before reading; `set` ignores the read when a change came in meanwhile. */
  version(): number {
    return this.changes;
  }

  set(key: string, value: V, now: number, readAt: number): void {
    if (!this.listening || readAt !== this.changes) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, until: now + this.ttlMs });
  }

  /** Forgets one key in this copy at once (the trigger's NOTIFY tells the other copies). */
  forget(key: string): void {
    this.changes++;
    this.entries.delete(key);
  }
}

const caches = new WeakMap<Db, Map<string, NotifiedCache<unknown>>>();

/** The cache of `channel` on this database handle, made on first use. */
export function notifiedCache<V>(db: Db, channel: string, ttlMs: number): NotifiedCache<V> {
  let byChannel = caches.get(db);
  if (!byChannel) caches.set(db, (byChannel = new Map()));
  let cache = byChannel.get(channel);
  if (!cache) byChannel.set(channel, (cache = new NotifiedCache<unknown>(db, channel, ttlMs)));
  return cache as NotifiedCache<V>;
}
