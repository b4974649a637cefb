#!/usr/bin/env bun
import { ConfigError, loadConfig, parseDuration } from "./config.ts";
import { startServer } from "./server.ts";
import { DataDirLocked } from "./cli/lock.ts";
import { SANDBOX_PREFIX } from "./modules/keys/tokens.ts";
import { inboxLink } from "./modules/sandbox/sign-in.ts";
import { parseScopes } from "./modules/keys/service.ts";
import { HELP } from "./cli/help.ts";
import { releaseStartupMemory } from "./os/startup-memory.ts";
import { movedMessage, readMovedTo } from "./cli/moved-marker.ts";
import { RestoreRefused } from "./cli/restore.ts";
import { admin, parse, Refused, table, UsageError, withDatabase } from "./cli/run.ts";
import { secrets } from "./cli/secrets-command.ts";
import { backupCommand, restoreCommand } from "./cli/backup-commands.ts";
import { accountsCommand } from "./cli/accounts-command.ts";
import { postsCommand } from "./cli/posts-command.ts";

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
  posts: postsCommand,
  secrets,
  backup: backupCommand,
  restore: restoreCommand,
};

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
