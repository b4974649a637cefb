#!/usr/bin/env bun
import { parseArgs } from "node:util";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ConfigError, dataLocation, existingSecretKey, loadConfig, parseDuration, type Config } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { systemClock } from "./clock.ts";
import type { AppContext } from "./context.ts";
import { createLogger } from "./log.ts";
import { createStorage } from "./storage/index.ts";
import { migrate } from "./db/migrate.ts";
import { startServer } from "./server.ts";
import { callAdminSocket } from "./cli/admin.ts";
import { adminCommands, type AdminCommand } from "./cli/commands.ts";
import { acquireLock, DataDirLocked } from "./cli/lock.ts";
import { accountCredentials } from "./modules/accounts/service.ts";
import { SANDBOX_PREFIX } from "./modules/keys/tokens.ts";
import { inboxLink } from "./modules/sandbox/sign-in.ts";
import { sandboxWiring } from "./modules/sandbox/state-store.ts";
import { KeyInputError, parseScopes } from "./modules/keys/service.ts";
import { UserInputError } from "./modules/users/service.ts";
import type { AccountCheckRow } from "./modules/accounts/check.ts";
import { HELP } from "./cli/help.ts";
import { releaseStartupMemory } from "./os/startup-memory.ts";
import { warnIfDataDirOpen } from "./db/data-dir.ts";
import { keyId } from "./db/crypto.ts";
import { UnreadableSecrets, type SecretsReport } from "./db/secret-rotation.ts";
import { movedMessage, readMovedTo } from "./cli/moved-marker.ts";
import { partialPath, writeBackup, type BackupSummary } from "./cli/backup.ts";
import { restoreBackup, RestoreRefused } from "./cli/restore.ts";
import { progressLine, watchFileGrowth } from "./cli/progress.ts";

/** A mistake on the command line: one line on stderr, exit 2. */
class UsageError extends Error {}

type Flags = Record<string, { type: "string" | "boolean"; short?: string }>;

function parse(args: string[], options: Flags, help: string): { values: Record<string, any>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    throw new UsageError(`${(e as Error).message.split("\n")[0]} (see --help)`);
  }
  if (parsed.values.help) {
    console.log(help);
    process.exit(0);
  }
  return parsed;
}

/** Runs an admin command: through the running server's socket, or on the database directly. */
async function admin(config: Config, command: AdminCommand, args: object): Promise<any> {
  if (!config.databaseUrl) {
    const viaSocket = await callAdminSocket(config.dataDir, command, args);
    if (viaSocket) {
      if (viaSocket.error) throw new UsageError(viaSocket.error);
      return viaSocket.result;
    }
  }
  return withDatabase(config, (ctx) =>
    (adminCommands[command] as (c: AppContext, a: object) => Promise<unknown>)(ctx, args),
  );
}

type AdminCall = (command: AdminCommand, args: object) => Promise<any>;

/**
 * Several admin commands in a row on one connection: through the running server's socket while one
 * answers, otherwise on the database opened once for all of them.
 */
async function adminSession<T>(config: Config, run: (call: AdminCall) => Promise<T>): Promise<T> {
  let viaSocket = !config.databaseUrl;
  let local: Promise<{ ctx: AppContext; close(): Promise<void> }> | undefined;
  try {
    return await run(async (command, args) => {
      if (viaSocket) {
        const r = await callAdminSocket(config.dataDir, command, args);
        if (r) {
          if (r.error) throw new UsageError(r.error);
          return r.result;
        }
        viaSocket = false;
      }
      local ??= openSession(config);
      const { ctx } = await local;
      try {
        return await (adminCommands[command] as (c: AppContext, a: object) => Promise<unknown>)(ctx, args);
      } catch (e) {
        if (e instanceof KeyInputError || e instanceof UserInputError) throw new UsageError(e.message);
        throw e;
      }
    });
  } finally {
    if (local) await (await local).close();
  }
}

/** Opens the database (taking the embedded database's lock) until close(). */
async function openSession(config: Config): Promise<{ ctx: AppContext; close(): Promise<void> }> {
  warnIfDataDirOpen(config.dataDir, createLogger(config.logLevel));
  const release = config.databaseUrl ? () => {} : acquireLock(config.dataDir);
  let db;
  try {
    db = await openDatabase(config);
    await migrate(db);
  } catch (e) {
    await db?.close();
    release();
    throw e;
  }
  const ctx: AppContext = {
    config,
    db,
    clock: systemClock,
    log: createLogger(config.logLevel),
    ...sandboxWiring(db, createStorage(config), config.publicUrl),
    credentials: accountCredentials({ db, config, clock: systemClock }),
  };
  return {
    ctx,
    async close() {
      await db.close();
      release();
    },
  };
}

/** Opens the database (taking the embedded database's lock) for one command and closes it after. */
async function withDatabase<T>(config: Config, run: (ctx: AppContext) => Promise<T>): Promise<T> {
  const session = await openSession(config);
  try {
    return await run(session.ctx);
  } catch (e) {
    if (e instanceof KeyInputError || e instanceof UserInputError) throw new UsageError(e.message);
    throw e;
  } finally {
    await session.close();
  }
}

function table(rows: Record<string, unknown>[], columns: string[]) {
  if (rows.length === 0) return "(none)";
  const cell = (v: unknown) => (v === null || v === undefined ? "-" : Array.isArray(v) ? v.join(",") : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join(
    "\n",
  );
}

async function serve(args: string[]) {
  const { values } = parse(
    args,
    { "no-scheduler": { type: "boolean" }, "allow-moved": { type: "boolean" } },
    HELP.serve,
  );
  const config = loadConfig();
  // After `crier move` the embedded database still holds the scheduled posts the new home now publishes.
  const moved = config.databaseUrl ? null : readMovedTo(config.dataDir);
  if (moved && !values["no-scheduler"] && !values["allow-moved"]) {
    console.error(`crier: ${movedMessage(config.dataDir, moved)}`);
    process.exit(1);
  }
  const server = await startServer(config, { scheduler: !values["no-scheduler"] });
  releaseStartupMemory();
  console.error(
    `Crier is listening on ${server.url} (database: ${server.ctx.db.kind}${config.databaseUrl ? "" : `, data in ${config.dataDir}`}). Docs: ${config.publicUrl}/docs`,
  );
  const shutdown = async (signal: string) => {
    console.error(`${signal} received: finishing in-flight work and stopping…`);
    await server.stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

async function move(args: string[]) {
  const { values } = parse(
    args,
    { "to-database": { type: "string" }, "to-s3": { type: "boolean" }, "allow-moved": { type: "boolean" } },
    HELP.move,
  );
  if (!values["to-database"]?.trim()) throw new UsageError("--to-database is required (see --help)");
  const { runMove } = await import("./cli/move-run.ts");
  try {
    await runMove(
      loadConfig(),
      { toDatabase: values["to-database"].trim(), toS3: !!values["to-s3"], allowMoved: !!values["allow-moved"] },
      (line) => console.error(line),
    );
  } catch (e) {
    if (e instanceof DataDirLocked || e instanceof ConfigError) throw e;
    // Whatever failed (a difference, the target or the bucket unreachable), the target's transaction rolled back.
    console.error(`crier: move failed, nothing was committed to the target: ${(e as Error)?.message ?? e}`);
    process.exit(1);
  }
}

async function migrateCommand(args: string[]) {
  parse(args, {}, HELP.migrate);
  const config = loadConfig();
  await withDatabase(config, async () => {});
  console.log(`migrations applied (${config.databaseUrl ? "PostgreSQL" : `embedded database in ${config.dataDir}`})`);
}

async function profiles(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const { values } = parse(rest, { name: { type: "string" }, sandbox: { type: "boolean" } }, HELP["profiles create"]);
    if (!values.name?.trim()) throw new UsageError("--name is required (see --help)");
    const p = await admin(loadConfig(), "profiles.create", { name: values.name.trim(), sandbox: !!values.sandbox });
    console.error(`created ${p.sandbox ? "sandbox " : ""}profile "${p.name}"`);
    console.log(p.id);
  } else if (sub === "set-limits") {
    const { values, positionals } = parse(
      rest,
      { workflows: { type: "string" }, accounts: { type: "string" } },
      HELP["profiles set-limits"],
    );
    if (positionals.length !== 1 || !/^[0-9a-f-]{36}$/i.test(positionals[0]))
      throw new UsageError("give exactly one PROFILE_ID, a profile's id from 'crier profiles list' (see --help)");
    if (values.workflows === undefined && values.accounts === undefined)
      throw new UsageError("give --accounts, --workflows or both (see --help)");
    const r = await admin(loadConfig(), "profiles.set-limits", {
      profileId: positionals[0],
      workflows: limitValue("workflows", values.workflows),
      accounts: limitValue("accounts", values.accounts),
    });
    const said = (["accounts", "workflows"] as const).filter((k) => r[k] !== undefined).map((k) => `${k} ${r[k]}`);
    console.log(`profile ${r.profile_id}: ${said.join(", ")}`);
  } else if (sub === "list") {
    parse(rest, {}, HELP["profiles list"]);
    console.log(
      table(await admin(loadConfig(), "profiles.list", {}), [
        "id",
        "name",
        "sandbox",
        "accounts_limit",
        "workflows_limit",
        "created_at",
      ]),
    );
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.profiles);
  } else throw new UsageError(`unknown command 'profiles ${sub}' (see crier profiles --help)`);
}

/** A --accounts or --workflows value: a whole number, 'unlimited' (null), or absent (undefined: unchanged). */
function limitValue(option: string, raw: string | undefined): number | null | undefined {
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (v === "unlimited") return null;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${option} must be a whole number >= 0 or 'unlimited', got "${v}"`);
  return Number(v);
}

async function keys(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const { values } = parse(
      rest,
      {
        name: { type: "string" },
        profile: { type: "string" },
        scopes: { type: "string" },
        "expires-in": { type: "string" },
      },
      HELP["keys create"],
    );
    if (!values.name?.trim()) throw new UsageError("--name is required (see --help)");
    let scopes;
    try {
      scopes = parseScopes(values.scopes ?? "all");
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    let expiresAt: string | null = null;
    if (values["expires-in"] !== undefined) {
      const seconds = parseDuration(values["expires-in"]);
      if (seconds === null || seconds <= 0)
        throw new UsageError(`--expires-in must be a duration like 30d, 12h or 90m, got "${values["expires-in"]}"`);
      expiresAt = new Date(Date.now() + seconds * 1000).toISOString();
    }
    const { key, token } = await admin(loadConfig(), "keys.create", {
      name: values.name.trim(),
      profileId: values.profile,
      scopes,
      expiresAt,
    });
    console.error(`created key ${key.id} "${key.name}" for profile ${key.profile_id}`);
    console.error(`scopes: ${key.scopes.join(", ")}; expires: ${key.expires_at ?? "never"}`);
    if (token.startsWith(SANDBOX_PREFIX) && key.scopes.includes("posts:read"))
      console.error(
        `sandbox inbox (what the emulators received; signs in once within 15 minutes, crier keys inbox-link ${key.id} makes another): ${inboxLink(loadConfig(), key.id, new Date())}`,
      );
    console.error("The token is shown only this once; store it now:");
    console.log(token);
  } else if (sub === "list") {
    const { values } = parse(rest, { profile: { type: "string" } }, HELP["keys list"]);
    const rows = await admin(loadConfig(), "keys.list", { profileId: values.profile });
    console.log(table(rows, ["id", "name", "prefix", "profile_id", "scopes", "expires_at", "revoked_at"]));
  } else if (sub === "inbox-link") {
    const { positionals } = parse(rest, {}, HELP["keys inbox-link"]);
    if (positionals.length !== 1) throw new UsageError("keys inbox-link takes exactly one key id (see --help)");
    const r = await admin(loadConfig(), "keys.inbox-link", { id: positionals[0] });
    console.error(`signs in to the sandbox inbox once, until ${r.expires_at}:`);
    console.log(r.link);
  } else if (sub === "revoke") {
    const { positionals } = parse(rest, {}, HELP["keys revoke"]);
    if (positionals.length !== 1) throw new UsageError("keys revoke takes exactly one key id (see --help)");
    const key = await admin(loadConfig(), "keys.revoke", { id: positionals[0] });
    console.log(`revoked key ${key.id} "${key.name}" at ${key.revoked_at}`);
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.keys);
  } else throw new UsageError(`unknown command 'keys ${sub}' (see crier keys --help)`);
}

async function media(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "cleanup") {
    parse(rest, {}, HELP["media cleanup"]);
    const r = await admin(loadConfig(), "media.cleanup", {});
    console.log(
      `removed ${r.removedTickets} expired upload ticket(s) and ${r.removedPartials} partial upload(s); settled ${r.settled}`,
    );
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.media);
  } else throw new UsageError(`unknown command 'media ${sub}' (see crier media --help)`);
}

async function users(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "create" || sub === "reset-password") {
    const { values } = parse(
      rest,
      sub === "create" ? { email: { type: "string" }, profile: { type: "string" } } : { email: { type: "string" } },
      HELP[`users ${sub}`],
    );
    if (!values.email?.trim()) throw new UsageError("--email is required (see --help)");
    const r = await admin(loadConfig(), `users.${sub}`, { email: values.email.trim(), profileId: values.profile });
    console.error(
      sub === "create"
        ? `user ${r.email} may work in profile ${r.profile_id}. Send them this link (valid until ${r.expires_at}, usable once) to choose a password:`
        : `a new sign-in link for ${r.email} (valid until ${r.expires_at}, usable once):`,
    );
    console.log(r.link);
  } else if (sub === "set") {
    const { values } = parse(
      rest,
      { email: { type: "string" }, "can-create-profiles": { type: "string" } },
      HELP["users set"],
    );
    if (!values.email?.trim()) throw new UsageError("--email is required (see --help)");
    const raw = values["can-create-profiles"]?.trim().toLowerCase();
    if (raw !== "true" && raw !== "false")
      throw new UsageError(`--can-create-profiles must be true or false, got "${raw ?? ""}" (see --help)`);
    const r = await admin(loadConfig(), "users.set", { email: values.email.trim(), canCreateProfiles: raw === "true" });
    console.log(`user ${r.email}: can create profiles ${r.can_create_profiles ? "yes" : "no"}`);
  } else if (sub === "list") {
    parse(rest, {}, HELP["users list"]);
    console.log(
      table(await admin(loadConfig(), "users.list", {}), ["id", "email", "can_create_profiles", "created_at"]),
    );
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.users);
  } else throw new UsageError(`unknown command 'users ${sub}' (see crier users --help)`);
}

async function mcp(args: string[]) {
  parse(args, {}, HELP.mcp);
  const { runStdioServer, McpConfigError } = await import("./mcp/stdio.ts");
  try {
    await runStdioServer(process.env);
  } catch (e) {
    if (e instanceof McpConfigError) throw new UsageError(e.message);
    throw e;
  }
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  serve,
  mcp,
  migrate: migrateCommand,
  move,
  profiles,
  keys,
  media,
  users,
  accounts: accountsCommand,
  secrets,
  backup: backupCommand,
  restore: restoreCommand,
};

/** A command that ran and refused (exit 1, unlike a mistake on the command line). */
class Refused extends Error {}

async function secrets(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "rotate") {
    const { values } = parse(rest, { batch: { type: "string" } }, HELP["secrets rotate"]);
    const batch = Number(values.batch ?? 100);
    if (!/^\d+$/.test(values.batch ?? "100") || batch < 1 || batch > 10_000)
      throw new UsageError(`--batch must be a whole number from 1 to 10000, got "${values.batch}"`);
    const config = loadConfig();
    await adminSession(config, (call) => rotateSecrets(config, call, batch));
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.secrets);
  } else throw new UsageError(`unknown command 'secrets ${sub}' (see crier secrets --help)`);
}

/** Batches until nothing is left under another key; progress on stderr, the outcome on stdout. */
async function rotateSecrets(config: Config, call: AdminCall, batch: number) {
  let status: SecretsReport = await call("secrets.status", {});
  // Through the socket the server's keys are used: refuse to "rotate" to a key this environment does not name.
  if (status.key_id !== keyId(config.secretKey))
    throw new Refused(
      "the running server uses another SECRET_KEY than this environment: restart it with the new SECRET_KEY " +
        "(and the old one as SECRET_KEY_PREVIOUS) first, then run the rotation again",
    );
  if (status.unreadable.length) throw new Refused(new UnreadableSecrets(status.unreadable).message);
  const total = status.to_rotate;
  if (total > 0) console.error(`re-encrypting ${total} stored secret(s) with SECRET_KEY, ${batch} per transaction`);
  let done = 0;
  for (;;) {
    let rotated: number;
    try {
      ({ rotated } = await call("secrets.rotate-batch", { batch }));
    } catch (e) {
      // A row no key opens (written since the check, by a copy with yet another key): nothing of that
      // batch changed. Through the socket the error arrives as text, so the report says which rows.
      const now: SecretsReport = await call("secrets.status", {});
      if (now.unreadable.length) throw new Refused(new UnreadableSecrets(now.unreadable).message);
      throw e;
    }
    done += rotated;
    if (rotated > 0) {
      console.error(`re-encrypted ${done}/${Math.max(total, done)}`);
      continue;
    }
    // None free: finished, or the rest is locked by another run (or was written under the old key meanwhile).
    status = await call("secrets.status", {});
    if (status.unreadable.length) throw new Refused(new UnreadableSecrets(status.unreadable).message);
    if (status.to_rotate === 0) break;
    await Bun.sleep(200);
  }
  console.log(
    `re-encrypted ${done} stored secret(s); nothing is left under another key: SECRET_KEY_PREVIOUS can be removed ` +
      "(restart each copy without it) once links signed with it have expired",
  );
}

async function backupCommand(args: string[]) {
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

async function restoreCommand(args: string[]) {
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

async function accountsCommand(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === "check") {
    const { values } = parse(
      rest,
      { profile: { type: "string" }, sandbox: { type: "boolean" }, json: { type: "boolean" } },
      HELP["accounts check"],
    );
    if (values.profile !== undefined && !/^[0-9a-f-]{36}$/i.test(values.profile))
      throw new UsageError("--profile takes a profile's id from 'crier profiles list'");
    const rows = (await admin(loadConfig(), "accounts.check", {
      profileId: values.profile,
      includeSandbox: !!values.sandbox,
    })) as AccountCheckRow[];
    if (values.json) console.log(JSON.stringify(rows, null, 2));
    else {
      const now = Date.now();
      console.log(
        table(
          rows.map((r) => ({
            account: r.account_id,
            platform: r.platform,
            username: r.username,
            token: r.token,
            expires: expiresIn(r.expires_at, now),
            scopes:
              r.scopes.granted === null
                ? "not reported"
                : Object.keys(r.scopes.missing).length
                  ? `missing for ${Object.keys(r.scopes.missing).join(",")}`
                  : "ok",
            api_version: r.api_version ? `${r.api_version.value} ${r.api_version.accepted ? "ok" : "refused"}` : "-",
            publish: r.can_publish ? "yes" : "NO",
          })),
          ["account", "platform", "username", "token", "expires", "scopes", "api_version", "publish"],
        ),
      );
      for (const r of rows) for (const p of r.problems) console.log(`${r.platform} ${r.username}: ${p}`);
    }
    if (rows.some((r) => !r.can_publish)) process.exitCode = 1;
  } else if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(HELP.accounts);
  } else throw new UsageError(`unknown command 'accounts ${sub}' (see crier accounts --help)`);
}

/** "in 3 d 4 h", "expired 2 h ago", or "-" when the platform gives no expiry. */
function expiresIn(at: string | null, now: number): string {
  if (!at) return "-";
  const ms = Date.parse(at) - now;
  const span = Math.abs(ms);
  const d = Math.floor(span / 86_400_000);
  const h = Math.floor((span % 86_400_000) / 3_600_000);
  const m = Math.floor((span % 3_600_000) / 60_000);
  const text = d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min`;
  return ms >= 0 ? `in ${text}` : `expired ${text} ago`;
}

async function main(argv: string[]) {
  // Every file and directory Crier creates (DATA_DIR, the database, media, the secret) is its user's alone.
  process.umask(0o077);
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    console.log(HELP.main);
    return;
  }
  if (command === "--version" || command === "-v") {
    console.log((await import("../package.json", { with: { type: "json" } })).default.version);
    return;
  }
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command '${command}' (see crier --help)`);
  await run(rest);
}

main(process.argv.slice(2)).catch((e) => {
  if (e instanceof UsageError) {
    console.error(`crier: ${e.message}`);
    process.exit(2);
  }
  if (e instanceof ConfigError || e instanceof DataDirLocked || e instanceof Refused || e instanceof RestoreRefused) {
    console.error(`crier: ${e.message}`);
    process.exit(1);
  }
  console.error(`crier: ${(e as Error)?.message ?? e}`);
  process.exit(1);
});
