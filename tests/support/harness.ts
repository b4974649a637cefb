import { loadConfig, type Config } from "../../src/config.ts";
import { createApp } from "../../src/app.ts";
import type { Clock } from "../../src/clock.ts";
import type { AppContext } from "../../src/context.ts";
import type { Db } from "../../src/db/client.ts";
import { createLogger } from "../../src/log.ts";
import { createStorage } from "../../src/storage/index.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { videoTools } from "../../src/media/tools.ts";
import { sandboxEmulatorOptions } from "../../src/platform/host/sandbox-media.ts";
import { accountCredentials } from "../../src/modules/accounts/service.ts";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { SCOPES, type Scope } from "../../src/http/scopes.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testDatabase } from "./db.ts";

/** A clock tests move by hand instead of sleeping. */
export class TestClock implements Clock {
  constructor(public current = new Date()) {}
  now() {
    return new Date(this.current.getTime());
  }
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
  set(d: Date) {
    this.current = new Date(d.getTime());
  }
}

export interface Harness {
  ctx: AppContext;
  db: Db;
  app: ReturnType<typeof createApp>;
  clock: TestClock;
  /** Calls the app in-process with app.handle(); `token` adds the bearer header. */
  request(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: BodyInit },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** A new profile and a key on it with the given scopes (all by default). */
  profile(opts?: {
    scopes?: Scope[];
    sandbox?: boolean;
    name?: string;
  }): Promise<{ profileId: string; token: string; keyId: string }>;
  close(): Promise<void>;
}

/** The SECRET_KEY of every harness: tests that write encrypted rows themselves encrypt with it. */
export const TEST_SECRET_KEY = "test-secret-key-that-is-long-enough-000";

export interface HostOptions {
  /** A database the test prepared itself (an upgraded one); a fresh migrated one by default. */
  database?: Db;
  /** The address rule of the sandbox emulators' media downloads (tests whose media live on loopback). */
  emulatorMediaAddress?: (ip: string) => boolean;
}

export async function createHarness(
  overrides: Partial<Config> = {},
  extra: Partial<AppContext> = {},
  host: HostOptions = {},
): Promise<Harness> {
  // A test that needs the database somewhere particular (at an old schema, on a small disk) passes its own.
  const db = host.database ?? extra.db ?? (await testDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), "crier-test-"));
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: "silent" }),
    ...overrides,
  };
  const clock = new TestClock();
  const storage = createStorage(config, clock);
  const ctx: AppContext = {
    config,
    db,
    clock,
    log: createLogger("silent"),
    // As src/server.ts wires it: emulators download media through the guard, the server's own from storage.
    platforms: createRegistry(undefined, undefined, {
      ffmpeg: videoTools(config).ffmpeg !== null,
      disabled: config.platformsDisabled,
      emulatorOptions: sandboxEmulatorOptions({
        publicUrl: config.publicUrl,
        ownStorage: storage,
        allowAddress: host.emulatorMediaAddress,
      }),
    }),
    storage,
    credentials: accountCredentials({ db, config, clock }),
    ...extra,
  };
  const app = createApp(ctx);
  return {
    ctx,
    db,
    app,
    clock,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: BodyInit | undefined = opts.raw;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async profile(opts = {}) {
      const p = await createProfile(db, opts.name ?? "test", opts.sandbox ?? false);
      const { key, token } = await createKey(db, { name: "test", profileId: p.id, scopes: opts.scopes ?? [...SCOPES] });
      return { profileId: p.id, token, keyId: key.id };
    },
    close: () => db.close(),
  };
}
