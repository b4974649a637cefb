import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { systemClock } from "../clock.ts";
import { createFsStorage } from "../storage/fs.ts";
import { acquireLock } from "./lock.ts";
import { moveDatabase, MoveError } from "./move.ts";
import { readMovedTo, redactedUrl, writeMovedTo } from "./moved-marker.ts";
import type { PGlite } from "@electric-sql/pglite";

export interface MoveOptions {
  toDatabase: string;
  toS3: boolean;
  allowMoved: boolean;
}

/**
 * `crier move`: the embedded installation in DATA_DIR into PostgreSQL (and its media into S3). Holds the
 * data directory's lock throughout, so it refuses while `crier serve` runs there and nothing changes the
 * source meanwhile; marks DATA_DIR as moved once the target has committed.
 */
export async function runMove(config: Config, opts: MoveOptions, report: (line: string) => void): Promise<void> {
  if (config.databaseUrl)
    throw new MoveError(
      "DATABASE_URL is set: move copies the embedded database in DATA_DIR; unset DATABASE_URL and give the target with --to-database",
    );
  if (!/^postgres(ql)?:\/\//.test(opts.toDatabase))
    throw new MoveError(`--to-database takes a postgres:// URL, got "${redactedUrl(opts.toDatabase)}"`);
  if (opts.toS3 && !config.s3)
    throw new MoveError("--to-s3 needs the bucket's settings in the environment (S3_BUCKET, S3_ENDPOINT, ...)");
  if (!existsSync(join(config.dataDir, "pglite", "PG_VERSION")))
    throw new MoveError(`there is no embedded database in ${config.dataDir} (DATA_DIR) to move`);
  const earlier = readMovedTo(config.dataDir);
  if (earlier && !opts.allowMoved)
    throw new MoveError(
      `${config.dataDir} was already moved to ${earlier.database} on ${earlier.moved_at}; give --allow-moved to copy it again`,
    );
  const release = acquireLock(config.dataDir);
  const source = await openDatabase({ dataDir: config.dataDir });
  try {
    await migrate(source);
    const pglite = (source as unknown as { pglite: PGlite }).pglite;
    const started = performance.now();
    report(`moving the embedded database in ${config.dataDir} to ${redactedUrl(opts.toDatabase)}`);
    let s3Bucket: string | null = null;
    await moveDatabase(pglite, opts.toDatabase, report, async (tx) => {
      if (!opts.toS3 || !config.s3) return;
      // Loaded only here: the AWS SDK is large and most commands never need it.
      const { createS3Storage } = await import("../storage/s3.ts");
      const { copyMediaToS3, rewriteMediaUrls } = await import("./move-media.ts");
      const fs = createFsStorage({ ...config, s3: undefined });
      const s3 = createS3Storage(config.s3, systemClock);
      await copyMediaToS3(pglite, fs, s3, report);
      await rewriteMediaUrls(tx, `${config.publicUrl}/media/`, (key) => s3.publicUrl(key), report);
      s3Bucket = config.s3.bucket;
    });
    writeMovedTo(config.dataDir, {
      database: redactedUrl(opts.toDatabase),
      s3_bucket: s3Bucket,
      moved_at: new Date().toISOString(),
    });
    report(
      `moved in ${((performance.now() - started) / 1000).toFixed(1)} s. Start Crier with DATABASE_URL set to the target` +
        (s3Bucket ? ` and S3_BUCKET=${s3Bucket}` : "") +
        ` and the same SECRET_KEY; 'crier serve' on ${config.dataDir} now refuses to start its engine`,
    );
  } finally {
    await source.close();
    release();
  }
}
