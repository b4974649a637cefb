// Backup and restore of a large embedded installation, through the real commands:
//   npx bun bench/backup.ts [POSTS]      (default 100,000; BENCH_MEDIA_FILES=10 media files of 1 MB each)
// Loads POSTS published posts (one Bluesky target each, on an account with encrypted credentials) into a
// new DATA_DIR, then times `crier backup` with no server running, `crier backup` while `crier serve` runs
// (and how long the API waited for the snapshot, with the p99 of /healthz answered during the backup), and
// `crier restore` of the archive into an empty DATA_DIR. Prints the times and sizes; goals: the API waits
// under 2 s, /healthz p99 during the backup under 2 s.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sql } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { encryptJson } from "../src/db/crypto.ts";
import { migrate } from "../src/db/migrate.ts";
import { createProfile } from "../src/modules/keys/service.ts";
import { BENCH_SECRET } from "./engine-support.ts";
import { figure } from "./figures.ts";

const ROOT = resolve(import.meta.dir, "..");
const POSTS = Number(process.argv[2] ?? process.env.BENCH_POSTS ?? 100_000);
const MEDIA_FILES = Number(process.env.BENCH_MEDIA_FILES ?? 10);
const scratch = mkdtempSync(join(tmpdir(), "crier-bench-backup-"));
const source = join(scratch, "source");
const env = (dataDir: string) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  DATA_DIR: dataDir,
  SECRET_KEY: BENCH_SECRET,
  LOG_LEVEL: "warn",
  PORT: "0",
});

function duSize(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  return total;
}
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

async function load() {
  const config = loadConfig({ DATA_DIR: source, SECRET_KEY: BENCH_SECRET, LOG_LEVEL: "silent" });
  const db = await openDatabase(config);
  await migrate(db);
  const profile = await createProfile(db, "bench");
  const credentials = encryptJson(config.secretKey, { accessJwt: "x", refreshJwt: "y", did: "did:plc:bench" });
  const [account] = await db.rows<{ id: string }>(sql`
    insert into accounts (profile_id, platform, remote_id, username, credentials)
    values (${profile.id}::uuid, 'bluesky', 'did:plc:bench', 'bench.test', ${credentials}) returning id`);
  for (let done = 0; done < POSTS; done += 50_000) {
    const count = Math.min(50_000, POSTS - done);
    await db.rows(sql`
      with p as (
        insert into posts (id, profile_id, content, created_at, updated_at, publish_at)
        select gen_random_uuid(), ${profile.id}::uuid, 'backup bench post ' || (i + ${done}),
          now() - (i * interval '1 second'), now() - (i * interval '1 second'), now() - (i * interval '1 second')
        from generate_series(1, ${count}) as i
        returning id, publish_at
      )
      insert into post_targets (post_id, profile_id, account_id, platform, position, status, scheduled_time, due_at,
        attempts, published_at, platform_post_id, created_at, updated_at)
      select p.id, ${profile.id}::uuid, ${account.id}::uuid, 'bluesky', 0, 'published', p.publish_at, p.publish_at,
        1, p.publish_at, 'at://' || p.id, p.publish_at, p.publish_at
      from p`);
  }
  await db.rows(sql`checkpoint`);
  await db.close();
  const media = join(source, "media");
  mkdirSync(media, { recursive: true, mode: 0o700 });
  for (let i = 0; i < MEDIA_FILES; i++)
    writeFileSync(join(media, `med_${randomBytes(16).toString("base64url").slice(0, 22)}.jpg`), randomBytes(1 << 20));
}

async function crier(args: string[], dataDir: string) {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, join(ROOT, "src", "main.ts"), ...args], {
    env: env(dataDir),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`crier ${args.join(" ")} exited ${code}: ${stderr}`);
  return { seconds, stdout, stderr };
}

async function serve(dataDir: string) {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src", "main.ts"), "serve"], {
    env: { ...env(dataDir), HOST: "127.0.0.1" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const reader = proc.stderr.getReader();
  let seen = "";
  let url: string | undefined;
  while (!url) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`crier serve exited: ${seen}`);
    seen += new TextDecoder().decode(value);
    url = /listening on (http:\/\/[^\s]+)/.exec(seen)?.[1];
  }
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return { url, stop: () => (proc.kill("SIGTERM"), proc.exited) };
}

const started = performance.now();
await load();
console.log(
  `loaded ${POSTS} posts and ${MEDIA_FILES} media files of 1 MB in ${((performance.now() - started) / 1000).toFixed(1)} s; DATA_DIR ${mb(duSize(source))}`,
);

const offline = join(scratch, "offline.tar");
const cold = await crier(["backup", "--to", offline], source);
console.log(`crier backup, no server running:  ${cold.seconds.toFixed(2)} s, archive ${mb(statSync(offline).size)}`);

const server = await serve(source);
// Warm: the first requests of a new process pay for compiling the routes, which is not the backup's doing.
for (let i = 0; i < 50; i++) await fetch(`${server.url}/healthz`);
const latencies: number[] = [];
let backingUp = true;
const probe = (async () => {
  while (backingUp) {
    const t = performance.now();
    await fetch(`${server.url}/healthz`);
    latencies.push(performance.now() - t);
    await Bun.sleep(20);
  }
})();
const live = join(scratch, "live.tar");
const hot = await crier(["backup", "--to", live], source);
backingUp = false;
await probe;
await server.stop();
const waited = Number(/the API waited (\d+) ms/.exec(hot.stderr)?.[1] ?? NaN);
latencies.sort((a, b) => a - b);
const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN;
console.log(
  `crier backup, while serving:      ${hot.seconds.toFixed(2)} s, archive ${mb(statSync(live).size)}; the API waited ${waited} ms; /healthz p99 ${p99.toFixed(0)} ms, slowest ${latencies
    .slice(-3)
    .map((l) => l.toFixed(0))
    .join(", ")} ms, over ${latencies.length} requests`,
);

const restored = join(scratch, "restored");
const restore = await crier(["restore", live], restored);
console.log(`crier restore:                    ${restore.seconds.toFixed(2)} s; DATA_DIR ${mb(duSize(restored))}`);

figure("backup: API wait for the snapshot", `${waited} ms`, "< 2000 ms", waited < 2000);
figure("backup: /healthz p99 during backup", `${p99.toFixed(0)} ms`, "< 2000 ms", p99 < 2000);
rmSync(scratch, { recursive: true, force: true });
