import { mkdirSync } from "node:fs";
import { copyFile, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import {
  isNoSpaceError,
  StoreFull,
  UploadTooLarge,
  type ObjectInfo,
  type OpenedObject,
  type ReceivedUpload,
  type ServerIntake,
  type Storage,
} from "./storage.ts";
import { contentTypeForKey, isMediaKey } from "./keys.ts";
import { signUploadToken } from "./upload-token.ts";
import { CollectEvery } from "../os/garbage.ts";

export interface FsStorage extends Storage {
  readonly intake: ServerIntake;
  readonly root: string;
  filePath(key: string): string;
}

const GC_EVERY_BYTES = 8 * 1024 * 1024;

const etagOf = (size: number, mtimeMs: number) => `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}"`;

async function ignoreMissing(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}

export function createFsStorage(config: Config): FsStorage {
  const root = join(config.dataDir, "media");
  const partialDir = join(root, ".partial");
  mkdirSync(partialDir, { recursive: true, mode: 0o700 });
  // Read on every use: PUBLIC_URL is fixed in production, but a test learns its port after start.
  const base = () => `${config.publicUrl}/media/`;

  const filePath = (key: string) => {
    if (!isMediaKey(key)) throw new Error(`not a media key: ${key}`);
    return join(root, key);
  };

  async function receiveInto(
    key: string,
    body: ReadableStream<Uint8Array> | null,
    maxBytes: number,
    headBytes: number,
  ): Promise<ReceivedUpload> {
    filePath(key);
    const partialPath = join(partialDir, `${key}.${randomBytes(6).toString("hex")}.part`);
    const fh = await open(partialPath, "wx", 0o644);
    const head = new Uint8Array(headBytes);
    let headLength = 0;
    let size = 0;
    const collect = new CollectEvery(GC_EVERY_BYTES, false);
    let ok = false;
    const reader = body?.getReader();
    try {
      while (reader) {
        const { done, value: chunk } = await reader.read();
        if (done) break;
        size += chunk.byteLength;
        // Every chunk is a fresh buffer that only a collection frees; left to itself the collector lets
        // hundreds of MB of read chunks pile up during one big upload (bench/upload). A hint every 8 MB
        // keeps the server's peak growth to a few MB.
        collect.add(chunk.byteLength);
        if (size > maxBytes) {
          await reader.cancel().catch(() => {});
          throw new UploadTooLarge(`body is larger than ${maxBytes} bytes`);
        }
        if (headLength < headBytes) {
          const take = Math.min(headBytes - headLength, chunk.byteLength);
          head.set(chunk.subarray(0, take), headLength);
          headLength += take;
        }
        // Awaiting each write is the back-pressure: the socket is read no faster than the disk takes it.
        let off = 0;
        while (off < chunk.byteLength) {
          const { bytesWritten } = await fh.write(chunk, off, chunk.byteLength - off);
          off += bytesWritten;
        }
      }
      ok = true;
    } finally {
      await fh.close();
      if (!ok) {
        await ignoreMissing(unlink(partialPath));
        // A write that failed (the disk is full) leaves the rest of the body unread: let the client know now.
        await reader?.cancel().catch(() => {});
      }
    }
    return { partialPath, size, head: head.subarray(0, headLength) };
  }

  const intake: ServerIntake = {
    kind: "server",

    async receive(key, body, maxBytes, headBytes) {
      try {
        return await receiveInto(key, body, maxBytes, headBytes);
      } catch (e) {
        // The partial file is gone by now: receiveInto removes it whatever went wrong.
        if (!isNoSpaceError(e)) throw e;
        throw new StoreFull("the disk under DATA_DIR is full");
      }
    },

    async commit(partialPath, key) {
      await rename(partialPath, filePath(key));
    },

    async discard(partialPath) {
      await ignoreMissing(unlink(partialPath));
    },

    async removeStalePartials(before) {
      const names = await readdir(partialDir).catch(() => [] as string[]);
      let removed = 0;
      for (const name of names) {
        const path = join(partialDir, name);
        const s = await stat(path).catch(() => null);
        if (!s || s.mtimeMs >= before.getTime()) continue;
        await unlink(path).catch(() => {});
        removed++;
      }
      return removed;
    },

    file: (key) => Bun.file(filePath(key)),
  };

  const storage: FsStorage = {
    intake,
    root,
    filePath,

    async signUpload(req) {
      const token = signUploadToken(config.secretKey, {
        mediaId: req.mediaId,
        key: req.key,
        contentType: req.contentType,
        maxBytes: req.maxBytes,
        exp: Math.floor(req.expiresAt.getTime() / 1000),
      });
      return { token, path: req.key, signedUrl: `${base()}${req.key}?token=${token}` };
    },

    async publicUrl(key) {
      filePath(key);
      return base() + key;
    },

    async stat(key): Promise<ObjectInfo | null> {
      try {
        const s = await stat(filePath(key));
        return { size: s.size, etag: etagOf(s.size, s.mtimeMs), lastModified: s.mtime };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw e;
      }
    },

    async readStart(key, bytes) {
      let fh;
      try {
        fh = await open(filePath(key), "r");
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return new Uint8Array(0);
        throw e;
      }
      try {
        const buf = Buffer.alloc(bytes);
        const { bytesRead } = await fh.read(buf, 0, bytes, 0);
        return new Uint8Array(buf.subarray(0, bytesRead));
      } finally {
        await fh.close();
      }
    },

    async open(key): Promise<OpenedObject | null> {
      const info = await storage.stat(key);
      const contentType = contentTypeForKey(key);
      if (!info || !contentType) return null;
      const path = filePath(key);
      return { key, contentType, size: info.size, stream: () => Bun.file(path).stream() };
    },

    async put(key, localPath) {
      const target = filePath(key);
      const partial = join(partialDir, `${key}.${randomBytes(6).toString("hex")}`);
      try {
        await copyFile(localPath, partial);
        await rename(partial, target);
      } catch (e) {
        await ignoreMissing(unlink(partial));
        if (isNoSpaceError(e)) throw new StoreFull("the disk under DATA_DIR is full");
        throw e;
      }
      return (await storage.stat(key))!;
    },

    async remove(key) {
      await ignoreMissing(unlink(filePath(key)));
    },

    async keyForPublicUrl(url) {
      const prefix = base();
      if (!url.startsWith(prefix)) return null;
      const rest = url.slice(prefix.length).split(/[?#]/)[0];
      return isMediaKey(rest) ? rest : null;
    },

    async openByPublicUrl(url) {
      const key = await storage.keyForPublicUrl(url);
      return key ? storage.open(key) : null;
    },

    async probeLocation(key) {
      return filePath(key);
    },
  };
  return storage;
}
