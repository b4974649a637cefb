/**
 * What the Google Business Profile emulator refuses of a localPosts.create body, written from Google's
 * reference (developers.google.com/my-business/reference/rest/v4/accounts.locations.localPosts, the
 * ValidationError and ErrorCode shared types, the Business Profile photo guidelines; all checked
 * 2026-11-26), not from the adapter: first the contract (./contract.ts: an unknown field or a wrong type is
 * Google's "Invalid JSON payload received"), then the rules between fields, then the photo Google fetches.
 */
import { Value } from "@sinclair/typebox/value";
import { downloadedFile } from "../../src/platform/emulator-kit.ts";
import { ERROR_CODES, LocalPost, type ErrorCodeName, type GoogleDate, type TimeOfDay } from "./contract.ts";

type Post = import("./contract.ts").LocalPost;

/** An error answer of the Business Profile APIs (google.rpc.Status). */
export class GoogleApiError extends Error {
  constructor(
    readonly status: number,
    readonly rpcStatus: string,
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message);
  }
}

/** 400 INVALID_ARGUMENT with a v4 ValidationError naming the field and its ErrorCode. */
export const invalid = (code: ErrorCodeName, field: string, message: string) =>
  new GoogleApiError(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", [
    {
      "@type": "type.googleapis.com/google.mybusiness.v4.ValidationError",
      errorDetails: [{ code: ERROR_CODES[code], field, message }],
    },
  ]);

/** "Description/body of the local post": at most 1,500 characters (support.google.com/business/answer/7662907). */
export const SUMMARY_MAX = 1500;
/** Photos: JPG or PNG, at most 5 MB (support.google.com/business/answer/6103862). */
const PHOTO_MAX_BYTES = 5 * 1024 * 1024;

/** The contract first: Google's JSON front end refuses unknown names and wrong types before anything else. */
export function conform(body: unknown): Post {
  const first = Value.Errors(LocalPost, body).First();
  if (!first) return body as Post;
  const at = `local_post${first.path.replace(/\//g, ".")}`;
  const unknown = first.message.startsWith("Unexpected property");
  throw new GoogleApiError(
    400,
    "INVALID_ARGUMENT",
    unknown
      ? `Invalid JSON payload received. Unknown name "${first.path.split("/").pop()}" at '${at.slice(0, at.lastIndexOf("."))}': Cannot find field.`
      : `Invalid value at '${at}' (${first.message}).`,
  );
}

const httpUrl = (u: string | undefined) => !!u && /^https?:\/\/\S+$/.test(u);

const realDate = (d: GoogleDate | undefined) => {
  if (!d?.year || !d.month || !d.day) return false;
  const probe = new Date(Date.UTC(d.year, d.month - 1, d.day));
  return probe.getUTCMonth() === d.month - 1 && probe.getUTCDate() === d.day;
};
const at = (d: GoogleDate, t: TimeOfDay) =>
  Date.UTC(d.year!, d.month! - 1, d.day!, t.hours ?? 0, t.minutes ?? 0, t.seconds ?? 0);

/** The rules between fields that the reference states. */
export function checkFields(p: Post): void {
  const topic = p.topicType;
  if (!topic || topic === "LOCAL_POST_TOPIC_TYPE_UNSPECIFIED")
    throw invalid("MISSING_VALUE", "topic_type", "The topic type of the post is required.");
  if (topic === "ALERT")
    throw invalid("UNSUPPORTED_VALUE", "topic_type", "Alert posts are not available for authoring.");
  if ([...(p.summary ?? "")].length > SUMMARY_MAX)
    throw invalid("INVALID_VALUE", "summary", `The summary must be at most ${SUMMARY_MAX} characters.`);
  if (!p.summary && !p.media?.length && topic === "STANDARD")
    throw invalid("MISSING_VALUE", "summary", "A post needs a summary or a photo.");
  const cta = p.callToAction;
  if (cta) {
    if (!cta.actionType || cta.actionType === "ACTION_TYPE_UNSPECIFIED")
      throw invalid("MISSING_VALUE", "call_to_action.action_type", "The call to action needs an action type.");
    if (cta.actionType === "GET_OFFER")
      throw invalid(
        "UNSUPPORTED_VALUE",
        "call_to_action.action_type",
        "GET_OFFER is deprecated: create an OFFER post.",
      );
    if (cta.actionType === "CALL" && cta.url !== undefined)
      throw invalid("INVALID_VALUE", "call_to_action.url", "A CALL action must not have a url.");
    if (cta.actionType !== "CALL" && !httpUrl(cta.url))
      throw invalid(
        cta.url ? "INVALID_VALUE" : "MISSING_VALUE",
        "call_to_action.url",
        "The call to action needs a valid url.",
      );
  }
  if (topic === "EVENT" || topic === "OFFER") {
    const e = p.event;
    if (!e) throw invalid("MISSING_VALUE", "event", `An ${topic} post requires an event.`);
    if (!e.title?.trim()) throw invalid("MISSING_VALUE", "event.title", "The event needs a title.");
    const s = e.schedule;
    // "It must contain all fields to be valid."
    if (!s?.startDate || !s.startTime || !s.endDate || !s.endTime)
      throw invalid(
        "MISSING_VALUE",
        "event.schedule",
        "The schedule needs a start date, start time, end date and end time.",
      );
    if (!realDate(s.startDate) || !realDate(s.endDate))
      throw invalid("INVALID_VALUE", "event.schedule", "The schedule's dates must be whole calendar dates.");
    if (at(s.endDate, s.endTime) < at(s.startDate, s.startTime))
      throw invalid("INVERTED_RANGE", "event.schedule", "The schedule ends before it starts.");
  }
  if (p.offer && topic !== "OFFER")
    throw invalid("UNSUPPORTED_VALUE", "offer", "Offer data is only for posts whose topic type is OFFER.");
  if (p.offer?.redeemOnlineUrl !== undefined && !httpUrl(p.offer.redeemOnlineUrl))
    throw invalid("INVALID_VALUE", "offer.redeem_online_url", "The redeem link must be a valid url.");
  for (const [i, m] of (p.media ?? []).entries()) {
    if (m.dataRef || !m.sourceUrl)
      throw invalid("INVALID_VALUE", `media[${i}]`, "sourceUrl is the only supported data field of a post's media.");
    if (m.mediaFormat !== "PHOTO")
      throw invalid("UNSUPPORTED_VALUE", `media[${i}].media_format`, "Only PHOTO media are taken on a post here.");
  }
}

export interface FetchedPhoto {
  contentType: string;
  size: number;
}

const sniff = (head: Uint8Array) =>
  head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff
    ? "image/jpeg"
    : head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47
      ? "image/png"
      : null;

/** Google fetches each photo from its sourceUrl: unreachable is PHOTO_FETCH_FAILED, not a JPG or PNG of ≤ 5 MB PHOTO_UPLOAD_FAILED. */
export async function fetchPhotos(
  p: Post,
  pull: ((url: string) => Promise<Response>) | undefined,
): Promise<FetchedPhoto[]> {
  const out: FetchedPhoto[] = [];
  for (const [i, m] of (p.media ?? []).entries()) {
    const file = await downloadedFile(m.sourceUrl!, pull);
    if (!file) throw invalid("PHOTO_FETCH_FAILED", `media[${i}].source_url`, "Fetching the photo from the url failed.");
    const type = sniff(file.head);
    if (!type || file.size > PHOTO_MAX_BYTES)
      throw invalid("PHOTO_UPLOAD_FAILED", `media[${i}].source_url`, "The photo must be a JPG or PNG of at most 5 MB.");
    out.push({ contentType: type, size: file.size });
  }
  return out;
}
