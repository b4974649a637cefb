/**
 * The Farcaster protocol's own contract, as the Farcaster emulator uses it: `@farcaster/core` (the
 * message codec and validators the hubs run). Neynar turns a cast request into a CastAdd message signed
 * with the managed signer's Ed25519 key and submits it to the network; the emulator does the same, so a
 * cast the protocol would refuse (text over 320 bytes in a plain cast or 1,024 in a long one, an embed URL
 * over 256 bytes, a bad parent) is refused, and the cast's hash is the message's real BLAKE3 hash. The
 * EIP-712 domain of signed key requests comes from the same package. Checked against @farcaster/core 0.20
 * on 2026-11-26.
 */
import { generateKeyPairSync } from "node:crypto";
import { contractPackage } from "../../src/platform/contract.ts";

type Core = typeof import("@farcaster/core");
export const farcasterCore = contractPackage<Core>("@farcaster/core");

/**
 * The key request validator's domain and types on OP Mainnet, for a sandbox without @farcaster/core
 * (docs.farcaster.xyz, "SignedKeyRequestValidator"; the same values the package exports).
 */
const FALLBACK_DOMAIN = {
  name: "Farcaster SignedKeyRequestValidator",
  version: "1",
  chainId: 10,
  verifyingContract: "0x00000000FC700472606ED4fA22623Acf62c60553",
} as const;
const FALLBACK_TYPES = {
  SignedKeyRequest: [
    { name: "requestFid", type: "uint256" },
    { name: "key", type: "bytes" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

export async function signedKeyRequestTypedData() {
  const core = await farcasterCore();
  return core
    ? {
        domain: core.SIGNED_KEY_REQUEST_VALIDATOR_EIP_712_DOMAIN,
        types: core.SIGNED_KEY_REQUEST_VALIDATOR_EIP_712_TYPES.types,
      }
    : { domain: FALLBACK_DOMAIN, types: FALLBACK_TYPES };
}

/** A managed signer's Ed25519 key pair: the 32-byte seed and the 32-byte public key, both hex. */
export function ed25519KeyPair(): { privateKey: string; publicKey: `0x${string}` } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = Buffer.from(privateKey.export({ format: "jwk" }).d!, "base64url");
  const pub = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
  return { privateKey: seed.toString("hex"), publicKey: `0x${pub.toString("hex")}` };
}

export interface CastRequest {
  fid: number;
  privateKey: string;
  text: string;
  embeds: string[];
  parent?: { fid: number; hash: string } | { url: string };
  timestamp: Date;
}

/**
 * The CastAdd message Neynar would submit, encoded and checked by the hubs' own validator: its hash
 * (0x…) and protobuf bytes, or the validator's reason. null without @farcaster/core.
 */
export async function castAddMessage(
  c: CastRequest,
): Promise<{ ok: true; hash: `0x${string}`; bytes: Uint8Array } | { ok: false; reason: string } | null> {
  const core = await farcasterCore();
  if (!core) return null;
  const text = Buffer.byteLength(c.text, "utf8");
  const body = {
    type: text > 320 ? core.CastType.LONG_CAST : core.CastType.CAST,
    text: c.text,
    embeds: c.embeds.map((url) => ({ url })),
    embedsDeprecated: [],
    mentions: [],
    mentionsPositions: [],
    ...(c.parent && "hash" in c.parent
      ? { parentCastId: { fid: c.parent.fid, hash: Buffer.from(c.parent.hash.slice(2), "hex") } }
      : c.parent
        ? { parentUrl: c.parent.url }
        : {}),
  };
  const signer = new core.NobleEd25519Signer(Buffer.from(c.privateKey, "hex"));
  const made = await core.makeCastAdd(
    body,
    {
      fid: c.fid,
      network: core.FarcasterNetwork.MAINNET,
      timestamp: core.toFarcasterTime(c.timestamp.getTime())._unsafeUnwrap(),
    },
    signer,
  );
  if (made.isErr()) return { ok: false, reason: made.error.message };
  // What travels is the encoded message: decode it again and run the hubs' full check (hash, signature).
  const bytes = core.Message.encode(made.value).finish();
  const checked = await core.validations.validateMessage(core.Message.decode(bytes));
  if (checked.isErr()) return { ok: false, reason: checked.error.message };
  return { ok: true, hash: `0x${Buffer.from(made.value.hash).toString("hex")}`, bytes };
}
