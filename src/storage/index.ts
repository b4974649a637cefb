import type { Config } from "../config.ts";
import { systemClock, type Clock } from "../clock.ts";
import { createFsStorage } from "./fs.ts";
import { createS3Storage } from "./s3.ts";
import type { Storage } from "./storage.ts";

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
