import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * After `crier move`, DATA_DIR/moved-to says where the installation went. The embedded database still
 * holds every scheduled post, so an engine started on it would publish them a second time beside the
 * new home's engine: `crier serve` refuses to start one while this file exists (see main.ts).
 */
export interface MovedTo {
  database: string;
  s3_bucket: string | null;
  moved_at: string;
}

const markerPath = (dataDir: string) => join(dataDir, "moved-to");

/** The database URL without its password: the marker is for people reading DATA_DIR. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}

export function readMovedTo(dataDir: string): MovedTo | null {
  const path = markerPath(dataDir);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as MovedTo;
  } catch {
    // A damaged marker still means the installation moved.
    return { database: "(unreadable marker)", s3_bucket: null, moved_at: "unknown" };
  }
}

export function writeMovedTo(dataDir: string, marker: MovedTo): void {
  writeFileSync(markerPath(dataDir), JSON.stringify(marker, null, 2) + "\n", { mode: 0o600 });
}

/** The refusal `crier serve` prints on a moved DATA_DIR. */
export function movedMessage(dataDir: string, marker: MovedTo): string {
  return (
    `the embedded database in ${dataDir} was moved to ${marker.database} on ${marker.moved_at}; ` +
    `its engine would publish the scheduled posts a second time, so it does not start. ` +
    `Serve the new home (DATABASE_URL), or run 'crier serve --no-scheduler' here to read the old data, ` +
    `or 'crier serve --allow-moved' if this copy is to publish again (delete ${join(dataDir, "moved-to")} to forget the move)`
  );
}
