/** Where every "now" comes from, so tests can move time by hand instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
