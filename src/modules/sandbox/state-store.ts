/**
 * The sandbox_state table as the store sandbox emulators keep their state in
 * (src/platform/host/sandbox-state.ts): one JSON document per sandbox profile and platform under a
 * version that each save raises, so a copy only ever saves over the state it read.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { OwnStorageOpener } from "../../platform/host/media-guard.ts";
import { createRegistry, type PlatformRegistry } from "../../platform/host/registry.ts";
import { sandboxEmulatorOptions } from "../../platform/host/sandbox-media.ts";
import type { SandboxStateStore } from "../../platform/host/sandbox-state.ts";

/**
 * The registry and storage of a server or command: sandbox state kept in the database, and emulators
 * that download media through the guard, the server's own media opened from its storage.
 */
export function sandboxWiring<S extends OwnStorageOpener>(
  db: Db,
  storage: S,
  publicUrl: string,
  /** ffmpeg is installed: video conversions are declared (videoTools(config).ffmpeg !== null). */
  ffmpeg?: boolean,
  /** PLATFORMS_DISABLED: platforms left out of the registry. */
  disabled: readonly string[] = [],
): { platforms: PlatformRegistry; storage: S } {
  return {
    platforms: createRegistry(undefined, undefined, {
      ffmpeg,
      disabled,
      sandboxState: sandboxStateStore(db),
      emulatorOptions: sandboxEmulatorOptions({ publicUrl, ownStorage: storage }),
    }),
    storage,
  };
}

export function sandboxStateStore(db: Db): SandboxStateStore {
  return {
    async load(profileId, platform, known) {
      const [row] = await db.rows<{ version: string | number; state: string }>(
        sql`SELECT version, state FROM sandbox_state
            WHERE profile_id = ${profileId} AND platform = ${platform} AND version <> ${known}`,
      );
      return row ? { version: Number(row.version), doc: row.state } : null;
    },
    async save(profileId, platform, version, doc) {
      const [row] = await db.rows<{ version: string | number }>(
        version === 0
          ? sql`INSERT INTO sandbox_state (profile_id, platform, version, state)
                VALUES (${profileId}, ${platform}, 1, ${doc})
                ON CONFLICT (profile_id, platform) DO NOTHING RETURNING version`
          : sql`UPDATE sandbox_state SET state = ${doc}, version = version + 1, updated_at = now()
                WHERE profile_id = ${profileId} AND platform = ${platform} AND version = ${version}
                RETURNING version`,
      );
      return row ? Number(row.version) : null;
    },
  };
}
