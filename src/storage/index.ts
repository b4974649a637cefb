import type { Config } from "../config.ts";
import { systemClock, type Clock } from "../clock.ts";
import { createFsStorage } from "./fs.ts";
import { createS3Storage } from "./s3.ts";

/** Facts about one stored object. */
export interface ObjectInfo {
  size: number;
  etag: string;
  lastModified: Date;
}

/** An object opened for reading: what the engine hands a plugin instead of fetching a URL. */
export interface OpenedObject {
  key: string;
  contentType: string;
  size: number;
  stream(): ReadableStream<Uint8Array>;
}

export interface UploadGrant {
  signedUrl: string;
  token: string;
  /** Where the bytes land: the key itself (fs) or its place in the upload area (s3). */
  path: string;
}

export interface UploadRequest {
  mediaId: string;
  key: string;
  contentType: string;
  maxBytes: number;
  expiresAt: Date;
}

/**
 * Where media bytes live. Two drivers: fs (files under DATA_DIR/media, uploaded and served by this
 * server) and s3 (any S3-compatible store, uploaded with presigned PUTs). Keys are media paths
 * (see src/modules/media/ids.ts); a driver never accepts a key outside that pattern.
 */
export interface Storage {
  readonly driver: "fs" | "s3";
  /** The URL (and token) a client PUTs the raw bytes to, valid until expiresAt. */
  signUpload(req: UploadRequest): Promise<UploadGrant>;
  /** The URL platforms and users fetch the object from. */
  publicUrl(key: string): Promise<string>;
  /** null when the object does not exist. */
  stat(key: string): Promise<ObjectInfo | null>;
  /** Up to `bytes` first bytes of the object (for sniffing), empty when it does not exist. */
  readStart(key: string, bytes: number): Promise<Uint8Array>;
  open(key: string): Promise<OpenedObject | null>;
  remove(key: string): Promise<void>;
  /** The key when `url` is one of our own public URLs (as publicUrl() makes them), else null. */
  keyForPublicUrl(url: string): Promise<string | null>;
  /**
   * Opens an object by one of our own public URLs without going through HTTP, so the media fetch
   * guard can let our URLs through (they may well be on loopback) and refuse every other private address.
   * null when the URL is not ours or the object does not exist.
   */
  openByPublicUrl(url: string): Promise<OpenedObject | null>;
  /** A location ffprobe can read: a local path (fs) or a short-lived URL (s3). */
  probeLocation(key: string): Promise<string>;
}

/** Picks the driver from config: S3_BUCKET set means s3, otherwise files under DATA_DIR/media. */
export function createStorage(config: Config, clock: Clock = systemClock): Storage {
  return config.s3 ? createS3Storage(config.s3, clock) : createFsStorage(config);
}

/**
 * The largest request body the HTTP server must let through: the biggest media limit plus slack for
 * the JSON routes. src/server.ts passes it to Bun.serve as maxRequestBodySize (Bun's default is 128 MB).
 */
export function maxUploadBytes(config: Config): number {
  return Math.max(config.maxImageBytes, config.maxGifBytes, config.maxVideoBytes, config.maxBodyBytes) + 1024 * 1024;
}
