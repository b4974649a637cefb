/**
 * The storage contract: what the media module, the engine and the media fetch guard may ask of either
 * driver (src/storage/fs.ts, src/storage/s3.ts). Kept apart from createStorage so the drivers import
 * it without importing each other.
 */
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

/** The body went past the ticket's limit; the partial file is already gone. */
export class UploadTooLarge extends Error {}

/**
 * The store has no room (a disk full or over quota, an S3 store answering 507 or a quota error); whatever
 * was partly written is already gone.
 */
export class StoreFull extends Error {}

/** The store could not be reached or failed (an S3 store answering 5xx or not at all); nothing was stored. */
export class StoreUnavailable extends Error {}

/** The errno codes of a disk (or the user's quota on it) that has no room left. */
const NO_SPACE_CODES = new Set(["ENOSPC", "EDQUOT"]);

/** S3 error codes that mean "the store has no room": Ceph RGW's quota, the generic 507 code, MinIO's disk full. */
const FULL_STORE_CODES = new Set(["QuotaExceeded", "InsufficientStorage", "XMinioStorageFull"]);

/**
 * What a store's refusal of a write means: no room (507, or a quota or storage-full error code), not
 * available (any other 5xx, or no answer), or null for a refusal that is neither (a 4xx: our request was wrong).
 */
export function storeWriteRefusal(status: number | undefined, errorCode?: string): StoreFull | StoreUnavailable | null {
  if (status === 507 || (errorCode && FULL_STORE_CODES.has(errorCode)))
    return new StoreFull(`the store refused the write (${errorCode ?? `HTTP ${status}`})`);
  if (status === undefined || status >= 500)
    return new StoreUnavailable(`the store did not take the write (${errorCode ?? `HTTP ${status ?? "no answer"}`})`);
  return null;
}

export const isNoSpaceError = (e: unknown): boolean =>
  NO_SPACE_CODES.has((e as { code?: unknown } | null)?.code as string);

export interface ReceivedUpload {
  partialPath: string;
  size: number;
  /** The first bytes, for sniffing. */
  head: Uint8Array;
}

/**
 * Uploads through this server (fs): the client PUTs the bytes here, they are streamed to a partial
 * file and renamed into place once checked, and this server serves the stored files.
 */
export interface ServerIntake {
  readonly kind: "server";
  /**
   * Streams a request body into a partial file beside the media folder (same disk, so the final
   * rename is atomic), never holding more than one chunk plus `headBytes` in memory.
   */
  receive(
    key: string,
    body: ReadableStream<Uint8Array> | null,
    maxBytes: number,
    headBytes: number,
  ): Promise<ReceivedUpload>;
  commit(partialPath: string, key: string): Promise<void>;
  discard(partialPath: string): Promise<void>;
  /** Deletes the partial files whose last write is older than `before` (uploads that died); returns how many. */
  removeStalePartials(before: Date): Promise<number>;
  /** A stored file, for serving it whole or in ranges. */
  file(key: string): Blob;
}

/**
 * Uploads straight to the store (s3): the client PUTs to an upload area, and Crier checks an upload
 * when someone looks, then copies it to the key it serves.
 */
export interface StoreIntake {
  readonly kind: "store";
  stat(key: string): Promise<ObjectInfo | null>;
  /** First bytes of the upload as it was when stat() saw `etag`; empty if it has changed or gone since. */
  readStart(key: string, bytes: number, etag: string): Promise<Uint8Array>;
  /** Copies the upload to its served key if it still has `etag`, then drops it; false when it changed meanwhile. */
  promote(key: string, etag: string): Promise<boolean>;
  remove(key: string): Promise<void>;
  /** Up to `limit` keys that have something in the upload area. */
  list(limit: number): Promise<string[]>;
}

/**
 * Where media bytes live. Two drivers: fs (files under DATA_DIR/media, uploaded and served by this
 * server) and s3 (any S3-compatible store, uploaded with presigned PUTs). Keys are media paths
 * (see src/domain/media-ids.ts); a driver never accepts a key outside that pattern.
 */
export interface Storage {
  /** How client uploads arrive, which decides who checks them and when (the driver's own operations). */
  readonly intake: ServerIntake | StoreIntake;
  /** The URL (and token) a client PUTs the raw bytes to, valid until expiresAt. */
  signUpload(req: UploadRequest): Promise<UploadGrant>;
  /** The URL platforms and users fetch the object from. */
  publicUrl(key: string): Promise<string>;
  /** null when the object does not exist. */
  stat(key: string): Promise<ObjectInfo | null>;
  /** Up to `bytes` first bytes of the object (for sniffing), empty when it does not exist. */
  readStart(key: string, bytes: number): Promise<Uint8Array>;
  open(key: string): Promise<OpenedObject | null>;
  /**
   * Stores a file Crier made itself (a converted copy, a poster frame) from a local path under `key`,
   * whole or not at all. Throws StoreFull or StoreUnavailable when the store cannot take it.
   */
  put(key: string, localPath: string): Promise<ObjectInfo>;
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
