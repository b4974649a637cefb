import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { createReadStream } from "node:fs";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { S3Config } from "../config.ts";
import type { Clock } from "../clock.ts";
import { storeWriteRefusal, type ObjectInfo, type OpenedObject, type Storage, type StoreIntake } from "./storage.ts";
import { contentTypeForKey, isMediaKey } from "./keys.ts";

/** SigV4 presigned URLs live at most seven days; a public_url without S3_PUBLIC_URL is one of these. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/**
 * Clients PUT to `incoming/<key>`; Crier copies a checked upload to `<key>`, the only object it serves.
 * A presigned PUT cannot be revoked, so a second PUT with the same URL lands in incoming/ and never
 * replaces what was checked and published.
 */
export const INCOMING_PREFIX = "incoming/";

export function createS3Client(s3: S3Config): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    credentials:
      s3.accessKeyId && s3.secretAccessKey
        ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }
        : undefined,
    // Otherwise presigned PUTs carry a CRC of an empty body, which real S3-compatible stores reject.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

const status = (e: unknown) => (e as S3ServiceException)?.$metadata?.httpStatusCode;
const isMissing = (e: unknown) => {
  const name = (e as S3ServiceException)?.name;
  return name === "NotFound" || name === "NoSuchKey" || status(e) === 404;
};

export interface S3Storage extends Storage {
  readonly intake: StoreIntake;
  readonly client: S3Client;
  readonly bucket: string;
  /** The upload area (the same object as intake). */
  readonly incoming: StoreIntake;
}

export function createS3Storage(s3: S3Config, clock: Clock): S3Storage {
  const client = createS3Client(s3);
  const Bucket = s3.bucket;
  const presignGet = (key: string, seconds: number) =>
    getSignedUrl(client, new GetObjectCommand({ Bucket, Key: key }), { expiresIn: seconds, signingDate: clock.now() });

  // Where our presigned URLs put the key: learnt from a URL for a sample key, so path-style, virtual-host
  // and custom endpoints are all recognised without knowing any host name.
  const SAMPLE = "med_AAAAAAAAAAAAAAAAAAAAAA.png";
  let presignedPrefix: Promise<string> | undefined;
  const prefixOfPresigned = () =>
    (presignedPrefix ??= presignGet(SAMPLE, 60).then((u) => {
      const parsed = new URL(u);
      return `${parsed.origin}${parsed.pathname}`.slice(0, -SAMPLE.length);
    }));

  const checked = (key: string) => {
    if (!isMediaKey(key)) throw new Error(`not a media key: ${key}`);
    return key;
  };

  async function statObject(Key: string): Promise<ObjectInfo | null> {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket, Key }));
      return { size: head.ContentLength ?? 0, etag: head.ETag ?? "", lastModified: head.LastModified ?? new Date(0) };
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async function readStartOf(Key: string, bytes: number, IfMatch?: string): Promise<Uint8Array> {
    try {
      const res = await client.send(new GetObjectCommand({ Bucket, Key, Range: `bytes=0-${bytes - 1}`, IfMatch }));
      // Some stores ignore a range on small objects; only the first bytes matter.
      return (await res.Body!.transformToByteArray()).subarray(0, bytes);
    } catch (e) {
      // Gone, changed since it was looked at (412), or empty (416): nothing usable to sniff.
      if (isMissing(e) || status(e) === 412 || status(e) === 416 || (e as Error)?.name === "InvalidRange")
        return new Uint8Array(0);
      throw e;
    }
  }

  const removeObject = async (Key: string) => {
    await client.send(new DeleteObjectCommand({ Bucket, Key }));
  };

  const incoming: StoreIntake = {
    kind: "store",
    stat: (key) => statObject(INCOMING_PREFIX + checked(key)),
    readStart: (key, bytes, etag) => readStartOf(INCOMING_PREFIX + checked(key), bytes, etag),
    async promote(key, etag) {
      try {
        await client.send(
          new CopyObjectCommand({
            Bucket,
            Key: checked(key),
            CopySource: `${Bucket}/${INCOMING_PREFIX}${key}`,
            CopySourceIfMatch: etag,
            ContentType: contentTypeForKey(key) ?? undefined,
            MetadataDirective: "REPLACE",
          }),
        );
      } catch (e) {
        if (status(e) === 412) return false;
        // Copying writes a new object: a store out of room (or down) says so as a typed refusal.
        throw storeWriteRefusal(status(e), (e as Error)?.name) ?? e;
      }
      await removeObject(INCOMING_PREFIX + key);
      return true;
    },
    remove: (key) => removeObject(INCOMING_PREFIX + checked(key)),
    async list(limit) {
      const res = await client.send(new ListObjectsV2Command({ Bucket, Prefix: INCOMING_PREFIX, MaxKeys: limit }));
      return (res.Contents ?? []).map((o) => (o.Key ?? "").slice(INCOMING_PREFIX.length)).filter(isMediaKey);
    },
  };

  const storage: S3Storage = {
    intake: incoming,
    client,
    bucket: Bucket,
    incoming,

    async signUpload(req) {
      const seconds = Math.max(
        1,
        Math.min(MAX_PRESIGN_SECONDS, Math.ceil((req.expiresAt.getTime() - clock.now().getTime()) / 1000)),
      );
      const path = INCOMING_PREFIX + checked(req.key);
      const signedUrl = await getSignedUrl(
        client,
        new PutObjectCommand({ Bucket, Key: path, ContentType: req.contentType }),
        {
          expiresIn: seconds,
          signingDate: clock.now(),
          // The PUT must carry the ticket's Content-Type: a different one breaks the signature.
          signableHeaders: new Set(["content-type"]),
        },
      );
      // The URL alone is the credential; the token field carries its signature for clients that want one.
      return { signedUrl, path, token: new URL(signedUrl).searchParams.get("X-Amz-Signature") ?? "" };
    },

    async publicUrl(key) {
      checked(key);
      if (s3.publicUrl) return `${s3.publicUrl}/${key}`;
      return presignGet(key, MAX_PRESIGN_SECONDS);
    },

    stat: (key) => statObject(checked(key)),
    readStart: (key, bytes) => readStartOf(checked(key), bytes),
    remove: (key) => removeObject(checked(key)),

    async put(key, localPath) {
      const file = Bun.file(localPath);
      try {
        await client.send(
          new PutObjectCommand({
            Bucket,
            Key: checked(key),
            Body: createReadStream(localPath),
            ContentLength: file.size,
            ContentType: contentTypeForKey(key) ?? undefined,
          }),
        );
      } catch (e) {
        throw storeWriteRefusal(status(e), (e as Error)?.name) ?? e;
      }
      return (await statObject(key))!;
    },

    async open(key): Promise<OpenedObject | null> {
      const contentType = contentTypeForKey(key);
      if (!contentType) return null;
      const info = await storage.stat(key);
      if (!info) return null;
      return {
        key,
        contentType,
        size: info.size,
        stream() {
          let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
          return new ReadableStream<Uint8Array>({
            async pull(controller) {
              if (!reader) {
                const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
                reader = (res.Body!.transformToWebStream() as ReadableStream<Uint8Array>).getReader();
              }
              const { done, value } = await reader.read();
              if (done) controller.close();
              else controller.enqueue(value);
            },
            async cancel(reason) {
              await reader?.cancel(reason);
            },
          });
        },
      };
    },

    async keyForPublicUrl(url) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return null;
      }
      const bare = `${parsed.origin}${parsed.pathname}`;
      for (const prefix of [s3.publicUrl ? `${s3.publicUrl}/` : null, await prefixOfPresigned()]) {
        if (prefix && bare.startsWith(prefix)) {
          const rest = bare.slice(prefix.length);
          if (isMediaKey(rest)) return rest;
        }
      }
      return null;
    },

    async openByPublicUrl(url) {
      const key = await storage.keyForPublicUrl(url);
      return key ? storage.open(key) : null;
    },

    async probeLocation(key) {
      return presignGet(checked(key), 3600);
    },
  };
  return storage;
}
