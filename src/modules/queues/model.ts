import { t, type Static } from "elysia";
import { Literals } from "../../http/model.ts";
import { DAYS } from "./wall-clock.ts";

/** The most slots one queue keeps: fourteen a day, every day of the week. */
export const MAX_SLOTS = 100;

const DayOut = Literals(DAYS, { description: "Day of the week in the queue's time zone: mon … sun." });
const TimeDescription = "Local wall-clock time, HH:MM from 00:00 to 23:59 (24-hour, leading zeros).";

const SlotInput = t.Object(
  {
    // Plain strings in the body: a bad day or time is answered 400 invalid_slot naming the slot's index.
    day: t.String({ description: "mon, tue, wed, thu, fri, sat or sun." }),
    time: t.String({ description: TimeDescription }),
  },
  { additionalProperties: false, title: "QueueSlotInput" },
);

export const QueueSlot = t.Object(
  { day: DayOut, time: t.String({ description: TimeDescription }) },
  { title: "QueueSlot" },
);

export const QueuePut = t.Object(
  {
    time_zone: t.String({
      description:
        'An IANA time zone ("Europe/Berlin", "America/New_York", "UTC"); else 400 invalid_time_zone. Slots are wall-clock times in it.',
    }),
    slots: t.Array(SlotInput, {
      description: `Up to ${MAX_SLOTS} weekly slots (else 400 too_many_slots), each day and time once (else 400 duplicate_slot); a bad day or time is 400 invalid_slot naming slots[i]. An empty list empties the queue.`,
    }),
  },
  { additionalProperties: false, title: "QueuePut" },
);

export const Queue = t.Object(
  {
    account_id: t.String(),
    time_zone: t.String({ description: 'The IANA time zone of the slots; "UTC" for an account without a queue.' }),
    slots: t.Array(QueueSlot, { description: "The weekly slots, by day (mon first) and time." }),
    updated_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description: "null while the account has never had a queue.",
    }),
  },
  {
    title: "Queue",
    description:
      "Extension: an account's posting queue. A post created with queue: true gives each target its account's next free slot.",
  },
);

export const QueueOccurrence = t.Object(
  {
    at: t.String({ format: "date-time", description: "The slot's instant, in UTC." }),
    local: t.String({
      description:
        "The wall-clock reading of at in the queue's time zone (yyyy-MM-ddTHH:mm). Equal to the slot's time except for a time the zone skips that day (spring forward), which is moved forward by the gap: 02:30 on such a night is 03:30.",
    }),
    day: DayOut,
    time: t.String({ description: "The slot's time as configured." }),
  },
  { title: "QueueOccurrence" },
);

export const NextQuery = t.Object({
  count: t.Optional(
    t.Integer({ minimum: 1, maximum: 100, default: 10, description: "How many, 1..100 (default 10)." }),
  ),
});

export const ShuffledPost = t.Object(
  {
    post_id: t.String(),
    previous_at: t.String({ format: "date-time", description: "The slot it had before the shuffle." }),
    ...QueueOccurrence.properties,
  },
  { title: "ShuffledPost" },
);

export type QueuePut = Static<typeof QueuePut>;
export type Queue = Static<typeof Queue>;
export type QueueOccurrence = Static<typeof QueueOccurrence>;
export type ShuffledPost = Static<typeof ShuffledPost>;
