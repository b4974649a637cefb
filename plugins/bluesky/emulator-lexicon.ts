/**
 * The AT Protocol's own contract, as the Bluesky emulator checks requests against it: the lexicons that
 * `@atproto/api` ships (the schemas the PDS and the AppView validate with), validated by
 * `@atproto/lexicon`. Every XRPC input body, every query's parameters and every record a client writes
 * go through it before the emulator's own rules, so a field the adapter misnames or mistypes is refused
 * as the real PDS refuses it ("Invalid app.bsky.feed.post record: Record/createdAt must be a valid
 * datetime"). Checked against @atproto/api 0.19 and @atproto/lexicon 0.6 on 2026-11-26.
 */
import type { LexUserType, Lexicons } from "@atproto/lexicon";
import { contractPackage } from "../../src/platform/contract.ts";

const api = contractPackage<typeof import("@atproto/api")>("@atproto/api");
const lexicon = contractPackage<typeof import("@atproto/lexicon")>("@atproto/lexicon");

export interface LexiconContract {
  /** null when the JSON input of procedure `nsid` is valid, else the validator's message. */
  input(nsid: string, body: unknown): string | null;
  /** null when the query string is valid for `nsid`, else the validator's message. */
  params(nsid: string, search: URLSearchParams): string | null;
  /** null when `value` is a valid record of `collection`, else the validator's message. */
  record(collection: string, value: unknown): string | null;
  /** The `maxSize` a lexicon gives a blob property, e.g. ("app.bsky.embed.images#image", "image"). */
  blobMaxSize(def: string, property: string): number | undefined;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The contract, or null where the packages are not installed (a production sandbox). */
export async function loadLexicons(): Promise<LexiconContract | null> {
  const [a, l] = await Promise.all([api(), lexicon()]);
  if (!a || !l) return null;
  const lex: Lexicons = a.lexicons;
  const { jsonToLex } = l;
  const attempt = (f: () => unknown): string | null => {
    try {
      f();
      return null;
    } catch (e) {
      return message(e);
    }
  };
  const def = (id: string): LexUserType | undefined => lex.getDef(id);
  return {
    input: (nsid, body) =>
      def(nsid)?.type === "procedure" ? attempt(() => lex.assertValidXrpcInput(nsid, jsonToLex(body))) : null,
    params(nsid, search) {
      const d = def(nsid);
      if (!d || (d.type !== "query" && d.type !== "procedure")) return null;
      const props = d.parameters?.properties ?? {};
      const typed: Record<string, unknown> = {};
      // A query string carries text: each value takes the type its lexicon declares before it is checked.
      for (const name of new Set(search.keys())) {
        const p = props[name];
        const raw = search.getAll(name);
        const cast = (v: string, type: string | undefined) =>
          type === "integer" ? Number(v) : type === "boolean" ? v === "true" : v;
        typed[name] =
          p?.type === "array" ? raw.map((v) => cast(v, p.items.type)) : cast(raw[0], p?.type as string | undefined);
      }
      return attempt(() => lex.assertValidXrpcParams(nsid, typed));
    },
    record: (collection, value) => attempt(() => lex.assertValidRecord(collection, jsonToLex(value))),
    blobMaxSize(id, property) {
      const d = def(id) as { properties?: Record<string, { type?: string; maxSize?: number }> } | undefined;
      const p = d?.properties?.[property];
      return p?.type === "blob" ? p.maxSize : undefined;
    },
  };
}
