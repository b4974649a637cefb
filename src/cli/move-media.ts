import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type postgres from "postgres";
import type { PGlite } from "@electric-sql/pglite";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import type { Storage } from "../storage/storage.ts";
import type { S3Storage } from "../storage/s3.ts";
import { isMediaKey } from "../storage/keys.ts";
import { MoveError } from "./move.ts";

type Report = (line: string) => void;

const COPY_CONCURRENCY = 4;

/**
 * Puts every uploaded media object of the embedded installation (and every converted copy of one) into the bucket under the same key, and
 * checks each one's size there. Runs before the database commits, so a failure leaves the target empty;
 * a repeated move overwrites the same keys with the same bytes.
 */
export async function copyMediaToS3(source: PGlite, from: Storage, to: S3Storage, report: Report): Promise<number> {
  // The converted copies go too (media_renditions): their rows move with the database and name these keys.
  const keys = (
    await source.query<{ path: string }>(
      `select path from media where status = 'uploaded'
       union select path from media_renditions where status = 'ready' and path is not null order by path`,
    )
  ).rows
    .map((r) => r.path)
    .filter(isMediaKey);
  let copied = 0;
  let missing = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const object = await from.open(key);
      if (!object) {
        // Already broken before the move (its file was deleted by hand): nothing to copy, said once below.
        missing++;
        continue;
      }
      // Streamed with its length, so a video of gigabytes never sits in memory (the SDK wants a Node stream).
      await to.client.send(
        new PutObjectCommand({
          Bucket: to.bucket,
          Key: key,
          Body: Readable.fromWeb(object.stream() as unknown as WebReadableStream<Uint8Array>),
          ContentLength: object.size,
          ContentType: object.contentType,
        }),
      );
      const there = await to.stat(key);
      if (there?.size !== object.size)
        throw new MoveError(`media ${key}: ${object.size} bytes on disk but ${there?.size ?? "none"} in the bucket`);
      copied++;
    }
  };
  await Promise.all(Array.from({ length: COPY_CONCURRENCY }, worker));
  report(
    `media: ${copied} file(s) copied to bucket ${to.bucket} in ${((performance.now() - started) / 1000).toFixed(2)} s` +
      (missing ? `; ${missing} uploaded media row(s) had no file on disk (left as they were)` : ""),
  );
  return copied;
}

const COLUMNS_SQL = `
  select c.table_name as table, c.column_name as column, c.data_type as type
  from information_schema.columns c join information_schema.tables t
    on t.table_schema = c.table_schema and t.table_name = c.table_name
  where c.table_schema = 'public' and t.table_type = 'BASE TABLE'
    and c.data_type in ('text', 'jsonb') and c.is_generated = 'NEVER'
  order by c.table_name, c.ordinal_position`;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

const BATCH = 2000;

/**
 * Rewrites every URL of the old store (`oldBase` + a media key) in every text and jsonb column: the media
 * of posts, drafts and workflow items, thumbnails, webhook payloads. Each becomes the new store's public
 * URL for the same key. Runs inside the move's transaction, after the exact copy was verified.
 */
export async function rewriteMediaUrls(
  tx: postgres.TransactionSql,
  oldBase: string,
  newUrl: (key: string) => Promise<string>,
  report: Report,
): Promise<number> {
  const pattern = new RegExp(`${escapeRegExp(oldBase)}([A-Za-z0-9._-]+)`, "g");
  const urls = new Map<string, string>();
  let total = 0;
  for (const { table, column, type } of await tx.unsafe<{ table: string; column: string; type: string }[]>(
    COLUMNS_SQL,
  )) {
    const col = `${quote(column)}${type === "jsonb" ? "::text" : ""}`;
    const rows = await tx.unsafe<{ tid: string; value: string }[]>(
      `select ctid::text as tid, ${col} as value from ${quote(table)} where ${col} like $1`,
      [`%${escapeLike(oldBase)}%`],
    );
    if (!rows.length) continue;
    const changed: { tid: string; value: string }[] = [];
    for (const row of rows) {
      const keys = [...row.value.matchAll(pattern)].map((m) => m[1]).filter(isMediaKey);
      for (const key of keys) if (!urls.has(key)) urls.set(key, await newUrl(key));
      const value = row.value.replace(pattern, (whole, key: string) => urls.get(key) ?? whole);
      if (value !== row.value) changed.push({ tid: row.tid, value });
    }
    for (let i = 0; i < changed.length; i += BATCH) {
      const batch = changed.slice(i, i + BATCH);
      await tx.unsafe(
        `update ${quote(table)} set ${quote(column)} = v.value::${type}
         from unnest($1::text[], $2::text[]) as v(tid, value) where ${quote(table)}.ctid = v.tid::tid`,
        [batch.map((b) => b.tid), batch.map((b) => b.value)],
      );
    }
    if (changed.length) report(`media URLs: ${changed.length} row(s) of ${table}.${column} rewritten`);
    total += changed.length;
  }
  return total;
}
