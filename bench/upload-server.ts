// The server half of bench/upload.ts: one Crier app with the fs driver in its own process, so its
// memory can be read from /proc without the client's. Prints one JSON line, then serves until killed.
import { loadConfig } from "../src/config.ts";
import { createApp } from "../src/app.ts";
import { systemClock } from "../src/clock.ts";
import type { AppContext } from "../src/context.ts";
import { openPglite, openPostgres } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { createLogger } from "../src/log.ts";
import { accountCredentials } from "../src/modules/accounts/service.ts";
import { createRegistry } from "../src/platform/host/registry.ts";
import { createKey, createProfile } from "../src/modules/keys/service.ts";
import { createStorage, maxUploadBytes } from "../src/storage/index.ts";

const dataDir = process.argv[2];
if (!dataDir) throw new Error("usage: bun bench/upload-server.ts <data-dir>");
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: "silent",
  SECRET_KEY: "bench-secret-key-that-is-long-enough-0000",
});
const db = process.env.DATABASE_URL ? openPostgres(process.env.DATABASE_URL) : await openPglite(undefined);
await migrate(db);
const profile = await createProfile(db, "bench");
const { token } = await createKey(db, { name: "bench", profileId: profile.id, scopes: ["media:read", "media:write"] });
const ctx: AppContext = {
  config,
  db,
  clock: systemClock,
  log: createLogger("silent"),
  platforms: createRegistry(),
  storage: createStorage(config),
  credentials: accountCredentials({ db, config, clock: systemClock }),
};
const app = createApp(ctx);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (r) => app.handle(r),
  maxRequestBodySize: maxUploadBytes(config),
  idleTimeout: 120,
});
config.publicUrl = `http://127.0.0.1:${server.port}`;
console.log(JSON.stringify({ url: config.publicUrl, token, pid: process.pid }));
