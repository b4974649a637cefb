/**
 * The Bluesky emulator's lookups by author and by reply parent, as the AppView keeps them: an author's feed,
 * a profile's post count and a post's reply count are keyed reads there, not scans of every record. Read
 * through a scan of every record, a getPosts of 25 posts cost 25 passes over the whole store, and a serving
 * copy's analytics job reading thousands of posts held the emulator's process (which also answers the
 * publishes) for seconds.
 *
 * Derived from the records, never saved with the state: it follows the records map it was built from and
 * is built again when that map is replaced (a reset, a restored sandbox snapshot) or grew without it.
 */
import type { StoredRecord } from "./emulator-records.ts";

export interface RecordIndex {
  /** The author's records in the order they were made. */
  byAuthor(did: string): readonly StoredRecord[];
  replyCount(uri: string): number;
  /** Records a record just added to the map. */
  added(r: StoredRecord): void;
}

export function recordIndex(records: () => Map<string, StoredRecord>): RecordIndex {
  let of: Map<string, StoredRecord> | undefined;
  let size = 0;
  let authors = new Map<string, StoredRecord[]>();
  let replies = new Map<string, number>();
  const add = (r: StoredRecord) => {
    const mine = authors.get(r.did);
    if (mine) mine.push(r);
    else authors.set(r.did, [r]);
    if (r.replyParent) replies.set(r.replyParent, (replies.get(r.replyParent) ?? 0) + 1);
  };
  const current = () => {
    const map = records();
    if (map === of && map.size === size) return;
    of = map;
    size = map.size;
    authors = new Map();
    replies = new Map();
    for (const r of map.values()) add(r);
  };
  return {
    byAuthor(did) {
      current();
      return authors.get(did) ?? [];
    },
    replyCount(uri) {
      current();
      return replies.get(uri) ?? 0;
    },
    added(r) {
      const map = records();
      // Kept up to date in place when it was current before this record; otherwise built at the next read.
      if (map !== of || map.size !== size + 1) return;
      size = map.size;
      add(r);
    },
  };
}
