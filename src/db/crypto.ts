import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

// AES-256-GCM; the stored text is "v1.<iv>.<tag>.<ciphertext>" in base64url, so the format can evolve.
// The key is derived once per secret: the engine decrypts an account's credentials for every publish.
const keys = new WeakMap<Buffer, Buffer>();
function key(secret: Buffer): Buffer {
  let derived = keys.get(secret);
  if (!derived) {
    derived = createHash("sha256").update("crier/credentials/v1").update(secret).digest();
    keys.set(secret, derived);
  }
  return derived;
}

export function encryptJson(secret: Buffer, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key(secret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(
    ".",
  );
}

export function decryptJson<T = unknown>(secret: Buffer, stored: string): T {
  const [version, iv, tag, body] = stored.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("unrecognised credentials format");
  const decipher = createDecipheriv("aes-256-gcm", key(secret), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return JSON.parse(
    Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8"),
  ) as T;
}
