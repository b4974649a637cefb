/**
 * A Crier target as a Google Business Profile local post: the platform_options a target takes (the kind of
 * post, its button, its event or offer), the rules between them that Google enforces, and the LocalPost
 * body localPosts.create is sent, typed by Google's contract (./contract.ts). Sources, checked 2026-11-26:
 * developers.google.com/my-business/reference/rest/v4/accounts.locations.localPosts (LocalPost,
 * CallToAction, LocalPostEvent, TimeInterval, LocalPostOffer).
 */
import { t, type Static } from "elysia";
import type { MediaItem, PublishJob } from "../../src/platform/sdk.ts";
import type { CallToAction, GoogleDate, LocalPost, TimeOfDay } from "./contract.ts";

const TOPICS = ["standard", "event", "offer"] as const;
const ACTIONS = ["book", "order", "shop", "learn_more", "sign_up", "call"] as const;
type Topic = (typeof TOPICS)[number];

const HttpUrl = (description: string) => t.String({ pattern: "^https?://\\S+$", maxLength: 2048, description });

/**
 * A wall-clock time at the location, as Google stores an event's schedule: a Date and a TimeOfDay without
 * a zone ("The date and time zone are either not significant or are specified elsewhere").
 */
const LocalTime = (description: string) =>
  t.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2})?)?$", description });

export const GoogleBusinessOptions = t.Object(
  {
    topic_type: t.Optional(
      t.UnionEnum(TOPICS, {
        description:
          "Extension: the kind of local post (Google's topicType): standard (an update), event or offer. " +
          "Defaults to offer when `offer` is given, else event when `event` is given, else standard.",
      }),
    ),
    call_to_action: t.Optional(
      t.Object(
        {
          action_type: t.UnionEnum(ACTIONS, {
            description:
              "The button: book, order, shop, learn_more, sign_up (each with a url) or call (the location's phone number, no url).",
          }),
          url: t.Optional(HttpUrl("Where the button leads; required except for call, where it must be absent.")),
        },
        {
          additionalProperties: false,
          description: "Extension: a button under a standard or event post (Google ignores one on an offer).",
        },
      ),
    ),
    event: t.Optional(
      t.Object(
        {
          title: t.String({ minLength: 1, description: "The event's (or the offer's) title." }),
          start: LocalTime(
            "Start, the location's wall-clock time: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], no offset (a date alone starts at 00:00).",
          ),
          end: LocalTime("End, as start (a date alone ends at 23:59:59); not before start."),
        },
        {
          additionalProperties: false,
          description: "Extension: the event of an event post, or the title and validity period of an offer.",
        },
      ),
    ),
    offer: t.Optional(
      t.Object(
        {
          coupon_code: t.Optional(t.String({ minLength: 1, description: "A code usable in store or online." })),
          redeem_online_url: t.Optional(HttpUrl("Where the offer is redeemed online.")),
          terms: t.Optional(t.String({ minLength: 1, description: "The offer's terms and conditions." })),
        },
        { additionalProperties: false, description: "Extension: an offer post's coupon, link and terms." },
      ),
    ),
    language_code: t.Optional(
      t.String({
        pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$",
        description: "Extension: the post's language as a BCP 47 tag (en, de-CH); Google decides when absent.",
      }),
    ),
  },
  { additionalProperties: true },
);
export type GoogleBusinessOptions = Static<typeof GoogleBusinessOptions>;

/** The kind of post the options make: topic_type, else offer with an offer, event with an event, standard. */
export function topicOf(o: GoogleBusinessOptions): Topic {
  return o.topic_type ?? (o.offer ? "offer" : o.event ? "event" : "standard");
}

/** "2026-12-24" or "2026-12-24T18:30[:05]" as a Date and a TimeOfDay; null when no such day or time exists. */
export function wallClock(value: string, endOfDay: boolean): { date: GoogleDate; time: TimeOfDay } | null {
  const [day, clock] = value.split("T");
  const [year, month, dayOfMonth] = day.split("-").map(Number);
  const [hours, minutes, seconds = 0] = clock ? clock.split(":").map(Number) : endOfDay ? [23, 59, 59] : [0, 0, 0];
  const probe = new Date(Date.UTC(year, month - 1, dayOfMonth));
  const realDay =
    year >= 1 &&
    probe.getUTCFullYear() === year &&
    probe.getUTCMonth() === month - 1 &&
    probe.getUTCDate() === dayOfMonth;
  if (!realDay || hours > 23 || minutes > 59 || seconds > 59) return null;
  return { date: { year, month, day: dayOfMonth }, time: { hours, minutes, seconds, nanos: 0 } };
}

const instant = (w: { date: GoogleDate; time: TimeOfDay }) =>
  Date.UTC(w.date.year!, w.date.month! - 1, w.date.day!, w.time.hours, w.time.minutes, w.time.seconds);

/**
 * What Google refuses of a post's options that the schema cannot say: an event or offer needs its event
 * (LocalPostEvent is "Required for topic types EVENT and OFFER"), whose TimeInterval "must contain all
 * fields" in order; offer only on an offer post; a call button has no url ("should be left unset for Call
 * CTA") and every other button needs one; a button on an offer is "Ignored for topic type OFFER", so
 * Crier refuses it rather than drop it silently.
 */
export function optionRules(o: GoogleBusinessOptions): { field: string; message: string }[] {
  const problems: { field: string; message: string }[] = [];
  const topic = topicOf(o);
  if (topic !== "standard" && !o.event)
    problems.push({
      field: "event",
      message: `A Google Business Profile ${topic} post needs event {title, start, end}.`,
    });
  if (topic === "standard" && o.event)
    problems.push({ field: "event", message: "event is for topic_type event or offer, not standard." });
  if (o.offer && topic !== "offer")
    problems.push({ field: "offer", message: `offer is for topic_type offer, not ${topic}.` });
  const cta = o.call_to_action;
  if (cta && topic === "offer")
    problems.push({
      field: "call_to_action",
      message: "Google ignores a button on an offer post; give offer.redeem_online_url instead.",
    });
  if (cta?.action_type === "call" && cta.url)
    problems.push({ field: "call_to_action.url", message: "A call button calls the location's number: send no url." });
  if (cta && cta.action_type !== "call" && !cta.url)
    problems.push({ field: "call_to_action.url", message: `A ${cta.action_type} button needs a url.` });
  if (o.event) {
    const start = wallClock(o.event.start, false);
    const end = wallClock(o.event.end, true);
    if (!start) problems.push({ field: "event.start", message: `${o.event.start} is no day or time of the calendar.` });
    if (!end) problems.push({ field: "event.end", message: `${o.event.end} is no day or time of the calendar.` });
    if (start && end && instant(end) < instant(start))
      problems.push({ field: "event.end", message: "The event ends before it starts." });
  }
  return problems;
}

const upper = <S extends string>(s: S) => s.toUpperCase() as Uppercase<S>;

function callToAction(cta: NonNullable<GoogleBusinessOptions["call_to_action"]>): CallToAction {
  return { actionType: upper(cta.action_type), ...(cta.url && { url: cta.url }) };
}

/** The photo Google fetches from its URL: "sourceUrl is the only supported data field for a LocalPost MediaItem". */
const photo = (m: MediaItem) => ({ mediaFormat: "PHOTO" as const, sourceUrl: m.url });

/** The LocalPost that localPosts.create is sent for a job (options already passed optionRules). */
export function localPostOf(job: Pick<PublishJob, "content" | "media" | "options">): LocalPost {
  const o = job.options as GoogleBusinessOptions;
  const topic = topicOf(o);
  const start = o.event && wallClock(o.event.start, false);
  const end = o.event && wallClock(o.event.end, true);
  return {
    ...(o.language_code && { languageCode: o.language_code }),
    ...(job.content && { summary: job.content }),
    topicType: upper(topic),
    ...(o.call_to_action && topic !== "offer" && { callToAction: callToAction(o.call_to_action) }),
    ...(o.event &&
      start &&
      end &&
      topic !== "standard" && {
        event: {
          title: o.event.title,
          schedule: { startDate: start.date, startTime: start.time, endDate: end.date, endTime: end.time },
        },
      }),
    ...(o.offer &&
      topic === "offer" && {
        offer: {
          ...(o.offer.coupon_code && { couponCode: o.offer.coupon_code }),
          ...(o.offer.redeem_online_url && { redeemOnlineUrl: o.offer.redeem_online_url }),
          ...(o.offer.terms && { termsConditions: o.offer.terms }),
        },
      }),
    ...(job.media.length > 0 && { media: job.media.map(photo) }),
  } satisfies LocalPost;
}
