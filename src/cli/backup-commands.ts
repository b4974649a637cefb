/** crier backup and crier restore. */
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { dataLocation, existingSecretKey, loadConfig, type Config } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { createLogger } from "../log.ts";
import { callAdminSocket } from "./admin.ts";
import { acquireLock } from "./lock.ts";
import { HELP } from "./help.ts";
import { warnIfDataDirOpen } from "../db/data-dir.ts";
import { partialPath, writeBackup, type BackupSummary } from "./backup.ts";
import { restoreBackup, RestoreRefused } from "./restore.ts";
import { progressLine, watchFileGrowth } from "./progress.ts";
import { parse, UsageError } from "./run.ts";

export async function backupCommand(args: string[]) {
  const { values, positionals } = parse(args, { to: { type: "string" } }, HELP.backup);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'; give --to FILE (see --help)`);
  if (!values.to?.trim()) throw new UsageError("--to FILE is required (see --help)");
  const to = resolve(values.to.trim());
  if (!existsSync(dirname(to))) throw new UsageError(`no directory ${dirname(to)} to write the backup in`);
  if (existsSync(to) && statSync(to).isDirectory()) throw new UsageError(`${to} is a directory; give a file name`);
  const config = loadConfig();
  if (config.databaseUrl)
    console.error(
      'The database is PostgreSQL: back it up with pg_dump (e.g. pg_dump --format=custom --file crier.dump "$DATABASE_URL"). This archive holds the media files only.',
    );
  if (config.s3)
    console.error(
      `Media are kept in the S3 bucket ${config.s3.bucket}: back the bucket up with its own tools; they are not in this archive.`,
    );
  const watch = watchFileGrowth(partialPath(to), "backup");
  let summary: BackupSummary;
  try {
    summary = config.databaseUrl ? await writeBackup({ db: null, config }, to) : await backupEmbedded(config, to);
  } finally {
    watch.stop();
  }
  const rows = Object.entries(summary.counts).reduce((n, [, c]) => n + c, 0);
  console.error(
    summary.database === "pglite"
      ? `backed up the embedded database (migration ${summary.migration}, ${rows} rows; posts ${summary.counts.posts ?? 0}, accounts ${summary.counts.accounts ?? 0}; the API waited ${summary.paused_ms} ms) and ${summary.media_files} media file(s) of ${summary.media_bytes} bytes: ${summary.bytes} bytes in all`
      : `backed up ${summary.media_files} media file(s) of ${summary.media_bytes} bytes: ${summary.bytes} bytes in all`,
  );
  console.error("The archive does not contain SECRET_KEY: keep the key (or DATA_DIR/secret.key) safe apart from it.");
  console.log(summary.file);
}

/** Through the running server's own database when one holds it; otherwise on the data directory, locked. */
async function backupEmbedded(config: Config, to: string): Promise<BackupSummary> {
  const viaSocket = await callAdminSocket(config.dataDir, "backup.write", { to });
  if (viaSocket) {
    if (viaSocket.error) throw new Error(viaSocket.error);
    return viaSocket.result as BackupSummary;
  }
  if (!existsSync(join(config.dataDir, "pglite", "PG_VERSION")))
    throw new UsageError(`no embedded database in ${config.dataDir} to back up (is DATA_DIR right?)`);
  warnIfDataDirOpen(config.dataDir, createLogger(config.logLevel));
  const release = acquireLock(config.dataDir);
  try {
    // Opened as it is, not migrated: the backup holds the data as the server left it.
    const db = await openDatabase(config);
    try {
      return await writeBackup({ db, config }, to);
    } finally {
      await db.close();
    }
  } finally {
    release();
  }
}

export async function restoreCommand(args: string[]) {
  const { values, positionals } = parse(args, { force: { type: "boolean" } }, HELP.restore);
  if (positionals.length !== 1)
    throw new UsageError("give exactly one FILE, an archive of 'crier backup' (see --help)");
  // Not loadConfig: with SECRET_KEY unset it would generate a new key into the empty DATA_DIR.
  const { dataDir, databaseUrl } = dataLocation();
  const secretKey = existingSecretKey(process.env, dataDir);
  const file = resolve(positionals[0]);
  console.error(
    "The archive does not contain SECRET_KEY: the restored server must run with the same SECRET_KEY (or the same DATA_DIR/secret.key) as the server that made it; the restore checks it opens a stored credential.",
  );
  const report = progressLine("restore", existsSync(file) ? statSync(file).size : undefined);
  let r;
  try {
    r = await restoreBackup({ file, dataDir, databaseUrl, secretKey, force: !!values.force, onRead: report });
  } catch (e) {
    if (e instanceof RestoreRefused) throw new RestoreRefused(`restore refused, DATA_DIR unchanged: ${e.message}`);
    throw e;
  }
  const m = r.manifest;
  console.error(
    m.database === "pglite"
      ? `restored the backup of ${m.created_at} (Crier ${m.crier_version}, migration ${m.migration}): posts ${m.counts.posts ?? 0}, accounts ${m.counts.accounts ?? 0}, workflows ${m.counts.workflows ?? 0}, webhooks ${m.counts.webhook_endpoints ?? 0}, ${m.files.length - 1} media file(s), into ${dataDir}`
      : `restored ${m.files.length} media file(s) of the backup of ${m.created_at} into ${dataDir}; the database comes back with pg_restore`,
  );
  if (m.media === "s3")
    console.error("The media were kept in an S3 bucket when the backup was made: they are not in it.");
  console.error(
    r.keyChecked
      ? "The configured key opens the stored credentials."
      : "No stored credential was there to check the key against.",
  );
  console.log(dataDir);
}
