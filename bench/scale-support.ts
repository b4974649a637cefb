// Shared by bench/scale.ts: a Bluesky emulator whose answers can be delayed, accounts connected to it in
// bulk, engine copies in their own processes (bench/dispatch-copy.ts) and whole servers (`crier serve`).
// bench/dispatch.ts runs its copies through runCopies too.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { serveEmulator } from "../src/platform/emulator-kit.ts";
import { connectContext } from "../src/platform/host/provider.ts";
import { upsertConnectedAccount } from "../src/modules/accounts/service.ts";
import { createBlueskyEmulator } from "../plugins/bluesky/emulator.ts";
import type { AppContext } from "../src/context.ts";
import { BENCH_SECRET } from "./engine-support.ts";

/** The Bluesky emulator on 127.0.0.1, answering every call after `delay.ms` (0: at once). */
export function delayedBluesky() {
  const emulator = createBlueskyEmulator();
  const delay = { ms: 0 };
  const delayed = Object.create(emulator) as typeof emulator;
  delayed.handle = async (req, path) => {
    if (delay.ms) await Bun.sleep(delay.ms);
    return emulator.handle(req, path);
  };
  return { emulator, delay, served: serveEmulator(delayed) };
}

/** `count` Bluesky accounts connected through the plugin as a user connects them, 32 at a time. */
export async function connectAccounts(ctx: AppContext, profileId: string, count: number, prefix: string) {
  const plugin = ctx.platforms.get("bluesky")!;
  if (plugin.connect?.mode !== "credential_form_url") throw new Error("unexpected Bluesky connect flow");
  const connect = plugin.connect;
  const ids: string[] = [];
  for (let i = 0; i < count; i += 32) {
    const batch = Array.from({ length: Math.min(32, count - i) }, (_, j) => i + j);
    ids.push(
      ...(await Promise.all(
        batch.map(async (n) => {
          const identity = await connect.verify(connectContext(ctx, "bluesky", { sandbox: false }), {
            handle: `${prefix}${n}.test`,
            app_password: "abcd-efgh-ijkl-mnop",
          });
          return (await upsertConnectedAccount(ctx, { profileId, platform: "bluesky", ...identity })).id;
        }),
      )),
    );
  }
  return ids;
}

export interface CopyClaims {
  claims: number;
  claimed: number;
  empty: number;
  cpuMs: number;
  /** Drain mode: runUntilIdle calls, ms from "go" until the first returned, and until the copy was done. */
  rounds?: number;
  firstIdleMs?: number;
  doneMs?: number;
}

/** One line on what each copy of a drain did, and when it first found nothing to claim. */
export function describeCopies(claims: CopyClaims[]): string {
  return claims
    .map(
      (c) =>
        `${c.claimed} targets in ${c.claims} claims, ${c.rounds} runUntilIdle rounds, first idle at ${c.firstIdleMs} ms, done at ${c.doneMs} ms`,
    )
    .join("; ");
}

/**
 * Runs `copies` engine copies, each in its own process (bench/dispatch-copy.ts): "drain" drains what is due
 * and stops, "ticks" runs as `crier serve` does until nothing waits. `beforeGo` runs once every copy is
 * ready; `answered`, polled every 50 ms in drain mode, says when the emulator has answered every target (the
 * copies are then told to stop). Returns the seconds from "go" until every copy is done, the wall-clock time of "go", and what each
 * copy said of its claims and CPU. BENCH_PROFILE_DIR: each copy writes a CPU profile there (bun --cpu-prof).
 */
export async function runCopies(
  copies: number,
  mode: "drain" | "ticks",
  env: Record<string, string>,
  beforeGo?: () => Promise<void>,
  answered?: () => boolean,
): Promise<{ seconds: number; goAt: Date; claims: CopyClaims[] }> {
  const profile = process.env.BENCH_PROFILE_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
    : [];
  const children = Array.from({ length: copies }, (_, i) =>
    spawn(process.execPath, [...profile, "bench/dispatch-copy.ts"], {
      env: { ...process.env, ...env, COPY_ID: `copy-${i}`, MODE: mode },
      stdio: ["pipe", "pipe", "inherit"],
    }),
  );
  const claims: CopyClaims[] = [];
  const line = (c: (typeof children)[number], want: string) =>
    new Promise<void>((resolve, reject) => {
      let buf = "";
      const onData = (d: Buffer) => {
        buf += d.toString();
        if (buf.split("\n").some((l) => l.trim() === want)) {
          for (const l of buf.split("\n")) if (l.startsWith("claims ")) claims.push(JSON.parse(l.slice(7)));
          c.stdout!.off("data", onData);
          resolve();
        }
      };
      c.stdout!.on("data", onData);
      c.on("exit", (code) => code !== 0 && reject(new Error(`copy exited with ${code}`)));
    });
  await Promise.all(children.map((c) => line(c, "ready")));
  await beforeGo?.();
  const t0 = performance.now();
  const goAt = new Date();
  const done = Promise.all(children.map((c) => line(c, "done")));
  for (const c of children) c.stdin!.write("go\n");
  // Once the emulator answered every target, copies waiting for their next tick need not: each is told
  // to stop, and one still publishing writes its last results first (engine.stop()).
  const watch =
    answered &&
    setInterval(() => {
      if (!answered()) return;
      clearInterval(watch);
      for (const c of children) c.stdin!.write("stop\n");
    }, 50);
  await done.finally(() => watch && clearInterval(watch));
  return { seconds: (performance.now() - t0) / 1000, goAt, claims };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface ServingCopy {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** A `crier serve` copy from source (API and engine in one process, as deployed), ready once /healthz answers. */
export async function serveCopy(env: Record<string, string>): Promise<ServingCopy> {
  const port = await freePort();
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error",
      PORT: String(port),
      HOST: "127.0.0.1",
      SECRET_KEY: BENCH_SECRET,
      RATE_LIMIT_PER_MINUTE: "0",
      ...env,
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  while (performance.now() - t0 < 60_000) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (proc.exitCode !== null) throw new Error(`crier serve exited with ${proc.exitCode}`);
    await Bun.sleep(50);
  }
  return {
    pid: proc.pid,
    url,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

export function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** Latency of one GET in ms (throws on a non-2xx answer: a failing API is not a fast one). */
export async function timedGet(url: string, token: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return performance.now() - t;
}
