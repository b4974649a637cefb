import {
  DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { S3Config } from "../config.ts";
import type { Clock } from "../context.ts";
import type { ObjectInfo, OpenedObject, Storage } from "./index.ts";
import { contentTypeForKey, isMediaKey } from "./keys.ts";

/** SigV4 presigned URLs live at most seven days; a public_url without S3_PUBLIC_URL is one of these. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export function createS3Client(s3: S3Config): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    credentials: s3.accessKeyId && s3.secretAccessKey
      ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }
      : undefined,
    // Otherwise presigned PUTs carry a CRC of an empty body, which real stores reject (STACK-NOTES).
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

const isMissing = (e: unknown) => {
  const err = e as S3ServiceException;
  return err?.name === "NotFound" || err?.name === "NoSuchKey" || err?.$metadata?.httpStatusCode === 404;
};

export interface S3Storage extends Storage {
  readonly driver: "s3";
  readonly client: S3Client;
  readonly bucket: string;
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
  const prefixOfPresigned = () => presignedPrefix ??= presignGet(SAMPLE, 60).then((u) => {
    const parsed = new URL(u);
    return `${parsed.origin}${parsed.pathname}`.slice(0, -SAMPLE.length);
  });

  const storage: S3Storage = {
    driver: "s3",
    client,
    bucket: Bucket,

    async signUpload(req) {
      const seconds = Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.ceil((req.expiresAt.getTime() - clock.now().getTime()) / 1000)));
      const signedUrl = await getSignedUrl(client, new PutObjectCommand({ Bucket, Key: req.key, ContentType: req.contentType }), {
        expiresIn: seconds,
        signingDate: clock.now(),
        // The PUT must carry the ticket's Content-Type: a different one breaks the signature.
        signableHeaders: new Set(["content-type"]),
      });
      // The URL alone is the credential; the token field carries its signature for clients that want one.
      return { signedUrl, token: new URL(signedUrl).searchParams.get("X-Amz-Signature") ?? "" };
    },

    async publicUrl(key) {
      if (!isMediaKey(key)) throw new Error(`not a media key: ${key}`);
      if (s3.publicUrl) return `${s3.publicUrl}/${key}`;
      return presignGet(key, MAX_PRESIGN_SECONDS);
    },

    async stat(key): Promise<ObjectInfo | null> {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return { size: head.ContentLength ?? 0, etag: head.ETag ?? "", lastModified: head.LastModified ?? new Date(0) };
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },

    async readStart(key, bytes) {
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: key, Range: `bytes=0-${bytes - 1}` }));
        const all = await res.Body!.transformToByteArray();
        return all.subarray(0, bytes);
      } catch (e) {
        const err = e as S3ServiceException;
        if (isMissing(e) || err?.name === "InvalidRange" || err?.$metadata?.httpStatusCode === 416) return new Uint8Array(0);
        throw e;
      }
    },

    async open(key): Promise<OpenedObject | null> {
      const contentType = contentTypeForKey(key);
      if (!contentType) return null;
      const info = await storage.stat(key);
      if (!info) return null;
      return {
        key, contentType, size: info.size,
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

    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
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
      return presignGet(key, 3600);
    },
  };
  return storage;
}
