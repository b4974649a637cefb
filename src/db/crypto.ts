import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * AES-256-GCM. The stored text is "v2.<key id>.<iv>.<tag>.<ciphertext>" in base64url: the key id names
 * the SECRET_KEY that made it, so a server holding two keys (SECRET_KEY and SECRET_KEY_PREVIOUS) opens it
 * with the right one and `crier secrets rotate` finds what is still under the old key in SQL. Texts of
 * the earlier "v1.<iv>.<tag>.<ciphertext>" format carry no key id: each key is tried.
 * The keys are derived once per secret: the engine decrypts an account's credentials for every publish.
 */
const keys = new WeakMap<Buffer, { aes: Buffer; id: string }>();
function derived(secret: Buffer) {
  let d = keys.get(secret);
  if (!d) {
    d = {
      aes: createHash("sha256").update("crier/credentials/v1").update(secret).digest(),
      // A hash under its own label, cut short: it names the key without helping anyone find it.
      id: createHash("sha256").update("crier/key-id/v1").update(secret).digest().subarray(0, 9).toString("base64url"),
    };
    keys.set(secret, d);
  }
  return d;
}

/** The id stored texts made with this secret begin with (after "v2."): 12 base64url characters. */
export const keyId = (secret: Buffer): string => derived(secret).id;

/** What every text encrypted with this secret begins with. */
export const storedPrefix = (secret: Buffer): string => `v2.${keyId(secret)}.`;

/** Raised when no key this server has opens a stored text: the message names the fix. */
export class UnknownSecretKey extends Error {
  constructor(readonly storedKeyId: string | null) {
    super(
      `the stored secret was encrypted with a SECRET_KEY this server does not have${storedKeyId ? ` (key id ${storedKeyId})` : ""}: ` +
        "if SECRET_KEY was changed, set SECRET_KEY_PREVIOUS to the old key and restart",
    );
  }
}

export function encryptJson(secret: Buffer, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", derived(secret).aes, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
  return [
    "v2",
    keyId(secret),
    iv.toString("base64url"),
    cipher.getAuthTag().toString("base64url"),
    body.toString("base64url"),
  ].join(".");
}

function open(secret: Buffer, iv: string, tag: string, body: string): string {
  const decipher = createDecipheriv("aes-256-gcm", derived(secret).aes, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}

/** The value and the secret that opened it; throws UnknownSecretKey when none of `secrets` does. */
export function openJson<T = unknown>(
  secrets: Buffer | readonly Buffer[],
  stored: string,
): { value: T; secret: Buffer } {
  const candidates = Array.isArray(secrets) ? (secrets as readonly Buffer[]) : [secrets as Buffer];
  const parts = stored.split(".");
  if (parts[0] === "v2" && parts.length === 5) {
    const [, id, iv, tag, body] = parts;
    const secret = candidates.find((s) => keyId(s) === id);
    if (!secret) throw new UnknownSecretKey(id);
    return { value: JSON.parse(open(secret, iv, tag, body)) as T, secret };
  }
  if (parts[0] === "v1" && parts.length === 4 && parts[1] && parts[2]) {
    const [, iv, tag, body] = parts;
    for (const secret of candidates) {
      let text: string;
      try {
        text = open(secret, iv, tag, body);
      } catch {
        continue; // GCM refused: another key made it
      }
      return { value: JSON.parse(text) as T, secret };
    }
    throw new UnknownSecretKey(null);
  }
  throw new Error("unrecognised credentials format");
}

/** The stored value, opened with whichever of `secrets` made it (SECRET_KEY first, then SECRET_KEY_PREVIOUS). */
export function decryptJson<T = unknown>(secrets: Buffer | readonly Buffer[], stored: string): T {
  return openJson<T>(secrets, stored).value;
}
