/**
 * Type-level checks of the YouTube adapter and emulator against YouTube's own contract, the types
 * `@googleapis/youtube` generates from Google's discovery document. Compiled by `npx tsc --noEmit -p .`
 * (tsconfig includes tests/), not run by bun test: each `@ts-expect-error` line must stay an error, so
 * the build fails if the contract stopped catching a misspelled or invented field, and the assignments
 * fail to compile if the adapter's body drifts from the contract. (The emulator's answers are checked
 * with `satisfies` where it builds them, and its lists of known fields in plugins/youtube/contract.ts.)
 */
import type { youtube_v3 } from "@googleapis/youtube";
import { videoResource } from "../../plugins/youtube/index.ts";

// The body the upload sends is a video resource as YouTube declares it, with the fields the adapter
// relies on present under their contract names.
const sent = videoResource({ content: "Title\nbody", options: { privacy_status: "unlisted" } }, "body");
export const asResource: youtube_v3.Schema$Video = sent;
export const title: string | null | undefined = sent.snippet.title;
export const privacy: youtube_v3.Schema$VideoStatus["privacyStatus"] = sent.status.privacyStatus;
export const madeForKids: youtube_v3.Schema$VideoStatus["selfDeclaredMadeForKids"] =
  sent.status.selfDeclaredMadeForKids;

// @ts-expect-error titel is not a field of the video snippet
export const misspelled: youtube_v3.Schema$Video = { snippet: { titel: "x" } };
// @ts-expect-error privacy is not a field of the video status (privacyStatus is)
export const wrongStatus: youtube_v3.Schema$Video = { status: { privacy: "public" } };
// @ts-expect-error playlistId belongs to playlist items, not to the video snippet
export const wrongResource: youtube_v3.Schema$VideoSnippet = { playlistId: "PL1" };
// @ts-expect-error a status answer's uploadStatus is a string, not a boolean
export const wrongType: youtube_v3.Schema$VideoStatus = { uploadStatus: true };
