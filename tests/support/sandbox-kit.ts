/**
 * Copies of Crier sharing one database behind one address, as behind a load balancer: each copy has its
 * own app, engine and sandbox emulators (state in the database, as src/server.ts wires it). A copy can be
 * stopped and a new one started (a restart), or several can answer in turn (several copies at once).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { videoTools } from "../../src/media/tools.ts";
import type { AppContext } from "../../src/context.ts";
import { openPostgres, type Db } from "../../src/db/client.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import { createLogger } from "../../src/log.ts";
import { accountCredentials } from "../../src/modules/accounts/service.ts";
import { sandboxWiring } from "../../src/modules/sandbox/state-store.ts";
import { createStorage } from "../../src/storage/index.ts";
import { testDatabase } from "./db.ts";
import { TestClock } from "./harness.ts";
import { followAuthorization, submitHostedForm } from "./connect-kit.ts";

export interface Copy {
  ctx: AppContext;
  app: ReturnType<typeof createApp>;
  engine: Engine;
  stop(): Promise<void>;
}

export interface SandboxCluster {
  url: string;
  db: Db;
  /** The copies' clock, moved by hand. */
  clock: TestClock;
  /** Starts another copy (on PostgreSQL with its own connection pool, with `config` over the defaults) behind the address. */
  start(config?: Partial<Config>): Promise<Copy>;
  /** Stops a copy and takes it from behind the address. */
  stopCopy(copy: Copy): Promise<void>;
  /** Calls the address as a client would; `token` adds the bearer header. */
  request(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown },
  ): Promise<{ status: number; body: any }>;
  /** Waits until no copy has anything due or in flight. */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

export async function sandboxCluster(): Promise<SandboxCluster> {
  const db = await testDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), "crier-sandbox-"));
  const copies: Copy[] = [];
  let turn = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch(req) {
      if (copies.length === 0) return new Response("no copy running", { status: 503 });
      return copies[turn++ % copies.length].app.handle(req);
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  const clock = new TestClock();
  const pools: Db[] = [];

  async function start(overrides: Partial<Config> = {}): Promise<Copy> {
    const own = copies.length === 0 || !db.url ? db : openPostgres(db.url, 5);
    if (own !== db) pools.push(own);
    const config = {
      ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: "test-secret-key-that-is-long-enough-000", LOG_LEVEL: "silent" }),
      publicUrl: url,
      ...overrides,
    };
    const ctx: AppContext = {
      config,
      db: own,
      clock,
      log: createLogger("silent"),
      ...sandboxWiring(own, createStorage(config, clock), url, videoTools(config).ffmpeg !== null),
      credentials: accountCredentials({ db: own, config, clock }),
    };
    const engine = createEngine(ctx, { random: () => 0.5 });
    ctx.dispatch = engine;
    const copy: Copy = { ctx, app: createApp(ctx), engine, stop: () => engine.stop() };
    copies.push(copy);
    return copy;
  }

  return {
    url,
    db,
    clock,
    start,
    async stopCopy(copy) {
      copies.splice(copies.indexOf(copy), 1);
      await copy.stop();
    },
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`${url}${path}`, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body };
    },
    async settle() {
      for (let i = 0; i < 3; i++) for (const c of copies) await c.engine.runUntilIdle();
    },
    async stop() {
      for (const c of copies.splice(0)) await c.stop();
      await server.stop(true);
      for (const p of pools) await p.close();
      await db.close();
    },
  };
}

/** Connects a sandbox account the way a user does: the API's connect call, then the hosted page or the OAuth redirect. */
export async function connectSandbox(cluster: SandboxCluster, token: string, platform: string): Promise<void> {
  const res = await cluster.request("POST", `/v1/accounts/connect/${platform}`, { token });
  if (res.status !== 201) throw new Error(`connect ${platform}: ${res.status} ${JSON.stringify(res.body)}`);
  const page = res.body.data.authorization_url
    ? await followAuthorization(res.body.data.authorization_url)
    : await submitHostedForm(res.body.data.hosted_url);
  if (!page.html.includes("Account connected")) throw new Error(`connect ${platform}: ${page.status} ${page.html}`);
}
