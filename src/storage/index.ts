import type { Config, S3Config } from "../config.ts";
import { systemClock, type Clock } from "../clock.ts";
import { createFsStorage } from "./fs.ts";
import type { Storage, StoreIntake } from "./storage.ts";

/** Picks the driver from config: S3_BUCKET set means s3, otherwise files under DATA_DIR/media. */
export function createStorage(config: Config, clock: Clock = systemClock): Storage {
  return config.s3 ? lazyS3Storage(config.s3, clock) : createFsStorage(config);
}

type Methods<T> = { [K in keyof T as T[K] extends (...args: any[]) => Promise<unknown> ? K : never]: T[K] };

/** An object whose `names` methods call the same methods of the object `load` resolves to. */
function forwarding<T>(load: () => Promise<T>, names: (keyof Methods<T>)[]): Methods<T> {
  return Object.fromEntries(
    names.map((name) => [name, async (...args: unknown[]) => ((await load())[name] as Function)(...args)]),
  ) as Methods<T>;
}

/**
 * The s3 driver with its SDK loaded on the first storage call rather than at start: the AWS SDK is ≈ 7 MB
 * of a copy's idle memory, which deployments keeping media on files never need. Every Storage method is
 * async, so the wait for the import hides behind the first one.
 */
function lazyS3Storage(s3: S3Config, clock: Clock): Storage {
  let driver: Promise<Storage> | undefined;
  const load = () => (driver ??= import("./s3.ts").then((m) => m.createS3Storage(s3, clock)));
  const intake: StoreIntake = {
    kind: "store",
    ...forwarding(async () => (await load()).intake as StoreIntake, ["stat", "readStart", "promote", "remove", "list"]),
  };
  return {
    intake,
    ...forwarding(load, [
      "signUpload",
      "publicUrl",
      "stat",
      "readStart",
      "open",
      "put",
      "remove",
      "keyForPublicUrl",
      "openByPublicUrl",
      "probeLocation",
    ]),
  };
}

/**
 * The largest request body the HTTP server must let through: the biggest media limit plus slack for
 * the JSON routes. src/server.ts passes it to Bun.serve as maxRequestBodySize (Bun's default is 128 MB).
 */
export function maxUploadBytes(config: Config): number {
  return Math.max(config.maxImageBytes, config.maxGifBytes, config.maxVideoBytes, config.maxBodyBytes) + 1024 * 1024;
}
