/**
 * The sandbox_state table as the store sandbox emulators keep their state in
 * (src/platform/host/sandbox-state.ts): one JSON document per platform under a version that each save
 * raises, so a copy only ever saves over the state it read.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { SandboxStateStore } from "../../platform/host/sandbox-state.ts";

export function sandboxStateStore(db: Db): SandboxStateStore {
  return {
    async load(platform, known) {
      const [row] = await db.rows<{ version: string | number; state: string }>(
        sql`SELECT version, state FROM sandbox_state WHERE platform = ${platform} AND version <> ${known}`,
      );
      return row ? { version: Number(row.version), doc: row.state } : null;
    },
    async save(platform, version, doc) {
      const [row] = await db.rows<{ version: string | number }>(
        version === 0
          ? sql`INSERT INTO sandbox_state (platform, version, state) VALUES (${platform}, 1, ${doc})
                ON CONFLICT (platform) DO NOTHING RETURNING version`
          : sql`UPDATE sandbox_state SET state = ${doc}, version = version + 1, updated_at = now()
                WHERE platform = ${platform} AND version = ${version} RETURNING version`,
      );
      return row ? Number(row.version) : null;
    },
  };
}
