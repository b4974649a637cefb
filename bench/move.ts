// `crier move` at size: an embedded installation of BENCH_POSTS (default 100,000) posts, one target each
// (90 % published, 10 % scheduled), each post's media pointing at one of BENCH_MEDIA (default 200) PNG files
// in DATA_DIR/media, moved by the real command into a scratch PostgreSQL database and an s3rver bucket on
// 127.0.0.1. Prints the move's own per-table lines and the wall time of the whole command.
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx bun bench/move.ts
// Not in the default `npm run bench` set: building the source installation takes longer than the move.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import S3rver from "s3rver";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { systemClock } from "../src/clock.ts";
import { createLogger } from "../src/log.ts";
import type { AppContext } from "../src/context.ts";
import { accountCredentials, upsertConnectedAccount } from "../src/modules/accounts/service.ts";
import { createProfile } from "../src/modules/keys/service.ts";
import { encodeMediaId } from "../src/domain/media-ids.ts";
import { BENCH_SECRET, scratchDatabase } from "./engine-support.ts";
import { figure } from "./figures.ts";

const POSTS = Number(process.env.BENCH_POSTS ?? 100_000);
const MEDIA = Number(process.env.BENCH_MEDIA ?? 200);
const PUBLIC_URL = "http://127.0.0.1:8080";
// The goal is what an operator can wait through in a maintenance window: 100,000 posts in under a minute,
// as 10 s of starting, migrating and verifying plus 0.5 ms a post.
const GOAL_SECONDS = 10 + POSTS * 0.0005;

// A 1×1 PNG: the move copies bytes, it never decodes them.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

const dataDir = mkdtempSync(join(tmpdir(), "crier-bench-move-"));
const env = { DATA_DIR: dataDir, SECRET_KEY: BENCH_SECRET, PUBLIC_URL, LOG_LEVEL: "silent" };
const scratch = await scratchDatabase();
const s3Dir = mkdtempSync(join(tmpdir(), "crier-bench-s3-"));
const s3 = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory: s3Dir,
  configureBuckets: [{ name: "bench" }],
});
const { port } = await s3.run();

try {
  const built = performance.now();
  const config = loadConfig(env);
  const db = await openDatabase({ dataDir });
  await migrate(db);
  const ctx = {
    config,
    db,
    clock: systemClock,
    log: createLogger("silent"),
    credentials: accountCredentials({ db, config, clock: systemClock }),
  } as unknown as AppContext;
  const profile = await createProfile(db, "bench", false);
  const account = await upsertConnectedAccount(ctx, {
    profileId: profile.id,
    platform: "bluesky",
    remoteId: "did:plc:bench",
    username: "bench.test",
    credentials: { accessJwt: "a", refreshJwt: "r" },
  });
  mkdirSync(join(dataDir, "media"), { recursive: true });
  const keys: string[] = [];
  for (let i = 0; i < MEDIA; i++) {
    const id = randomUUID();
    const key = `${encodeMediaId(id)}.png`;
    writeFileSync(join(dataDir, "media", key), PNG);
    await db.rows(sql`insert into media (id, profile_id, filename, content_type, path, status, size_bytes, max_bytes,
      width, height, expires_at, uploaded_at)
      values (${id}, ${profile.id}, 'a.png', 'image/png', ${key}, 'uploaded', ${PNG.length}, 1000000, 1, 1,
        now() + interval '1 day', now())`);
    keys.push(key);
  }
  const urls = `{${keys.map((k) => `"${PUBLIC_URL}/media/${k}"`).join(",")}}`;
  await db.rows(sql`
    with p as (
      insert into posts (id, profile_id, content, media, created_at, updated_at, publish_at)
      select gen_random_uuid(), ${profile.id}::uuid, 'moved post ' || i,
        jsonb_build_array(jsonb_build_object('url', (${urls}::text[])[1 + i % ${MEDIA}], 'type', 'image')),
        now() - (i * interval '1 second'), now() - (i * interval '1 second'),
        case when i % 10 = 0 then now() + interval '30 days' + (i * interval '1 millisecond')
          else now() - (i * interval '1 second') end
      from generate_series(1, ${POSTS}) as i
      returning id, publish_at
    )
    insert into post_targets (post_id, profile_id, account_id, platform, position, status, scheduled_time, due_at,
      attempts, published_at, platform_post_id, created_at, updated_at)
    select p.id, ${profile.id}::uuid, ${account.id}::uuid, 'bluesky', 0,
      case when p.publish_at > now() then 'scheduled' else 'published' end, p.publish_at, p.publish_at,
      case when p.publish_at > now() then 0 else 1 end,
      case when p.publish_at > now() then null else p.publish_at end,
      case when p.publish_at > now() then null else 'at://' || p.id end, p.publish_at, p.publish_at
    from p`);
  await db.close();
  console.log(`built ${POSTS} posts and ${MEDIA} media files in ${((performance.now() - built) / 1000).toFixed(1)} s`);

  const started = performance.now();
  const child = Bun.spawn([process.execPath, "src/main.ts", "move", "--to-database", scratch.url, "--to-s3"], {
    env: {
      ...process.env,
      ...env,
      DATABASE_URL: "",
      LOG_LEVEL: "warn",
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_BUCKET: "bench",
      S3_ACCESS_KEY_ID: "S3RVER",
      S3_SECRET_ACCESS_KEY: "S3RVER",
      S3_FORCE_PATH_STYLE: "true",
    },
    stdout: "inherit",
    stderr: "inherit",
  });
  const code = await child.exited;
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`crier move exited with ${code}`);
  console.log(`moved ${POSTS} posts in ${seconds.toFixed(1)} s (${Math.round(POSTS / seconds)} posts/s)`);
  figure(`move ${POSTS} posts`, `${seconds.toFixed(1)} s`, `< ${GOAL_SECONDS.toFixed(0)} s`, seconds < GOAL_SECONDS);
} finally {
  await s3.close();
  await scratch.drop();
  rmSync(s3Dir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
