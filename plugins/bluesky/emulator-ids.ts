/**
 * Identifiers the Bluesky emulator hands out, shaped like the real ones so that code parsing them (an
 * at:// URI's rkey, a CID in a blob ref, a JWT's three parts) meets what it will meet in production.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";

const B32 = "abcdefghijklmnopqrstuvwxyz234567";

function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

/** A CIDv1 (sha2-256) in base32: codec 0x71 dag-cbor for records ("bafyrei…"), 0x55 raw for blobs ("bafkrei…"). */
export function cid(data: Uint8Array | string, codec: "dag-cbor" | "raw"): string {
  const digest = sha256(data);
  return "b" + base32(new Uint8Array([0x01, codec === "raw" ? 0x55 : 0x71, 0x12, 0x20, ...digest]));
}

/** did:plc identifiers are 24 base32 characters; derived from the handle so a handle keeps its DID. */
export function plcDid(handle: string): string {
  return "did:plc:" + base32(sha256(`did:${handle}`)).slice(0, 24);
}

const TID_CHARS = "234567abcdefghijklmnopqrstuvwxyz";
let lastMicros = 0n;

/** A record key of the "tid" kind: microseconds since the epoch and a clock id, 13 sortable characters. */
export function tid(nowMs: number): string {
  let micros = BigInt(nowMs) * 1000n;
  if (micros <= lastMicros) micros = lastMicros + 1n;
  lastMicros = micros;
  let v = (micros << 10n) | BigInt(Math.floor(Math.random() * 1024));
  let out = "";
  for (let i = 0; i < 13; i++) {
    out = TID_CHARS[Number(v & 31n)] + out;
    v >>= 5n;
  }
  return out;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const secret = randomBytes(32);

/** A signed JWT the way a PDS issues them (HS256 for session tokens); the emulator checks its own list. */
export function jwt(payload: Record<string, unknown>): string {
  const head = `${b64url({ typ: "JWT", alg: "HS256" })}.${b64url({ ...payload, jti: randomBytes(12).toString("base64url") })}`;
  return `${head}.${createHmac("sha256", secret).update(head).digest("base64url")}`;
}
