/**
 * The wake-up between ticks (src/engine/lifecycle.ts armWake): after a claim that came up short, a copy
 * looks for its platforms' next target falling due within the second and claims it then, without waiting
 * for the next tick. The look is per platform (src/engine/claim.ts nextDueWithin).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { nextDueWithin } from "../../src/engine/claim.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";
import { until } from "../support/until.ts";

let h: EngineHarness;
let token: string;
let account: string;

beforeAll(async () => {
  h = await engineHarness({ engine: { wakeForNextDue: true } });
  const p = await h.profile();
  token = p.token;
  account = await h.bluesky(p.profileId, "wake.test");
});
afterAll(() => h?.close());

const schedule = async (content: string, inMs: number) => {
  const res = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content,
      publish_at: new Date(h.clock.now().getTime() + inMs).toISOString(),
      targets: [{ account_id: account }],
    },
  });
  expect(res.status).toBe(201);
};

test("the next due time is looked up per platform, and only within the coming second", async () => {
  await schedule("wake later", 700);
  const now = h.clock.now();
  const due = await nextDueWithin(h.db, now, 1000, ["bluesky"]);
  expect(due?.getTime()).toBe(now.getTime() + 700);
  expect(await nextDueWithin(h.db, now, 1000, ["telegram", "reddit"])).toBeNull();
  expect(await nextDueWithin(h.db, now, 500, ["bluesky"])).toBeNull();
  h.clock.advance(700);
  await h.engine.runUntilIdle();
});

test("a target falling due within the second goes out when it falls due, with no tick in between", async () => {
  // Past the quiet spell a look that found nothing holds (the last test's last claim came up empty).
  h.clock.advance(1000);
  await schedule("wake soon", 400);
  // One tick: nothing is due yet, so the claim comes up short for Bluesky and the copy looks ahead.
  await h.engine.tick();
  expect(h.emulator.posts().some((p) => p.text === "wake soon")).toBe(false);
  h.clock.advance(400);
  // No tick runs in this test (the engine's timer is never started): only the wake-up can claim it.
  await until(
    "the post published by the wake-up",
    () => (h.emulator.posts().some((p) => p.text === "wake soon") ? true : undefined),
    3,
    20,
  );
});
