import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { WebhookSigner } from "../../src/engine/webhook-signature.ts";

// Receivers verify with a Standard Webhooks library: every signature must be the one it computes.
describe("webhook signatures", () => {
  const sentAt = new Date("2026-11-27T09:10:11.999Z");
  const bodies = ['{"type":"post.created"}', '{"content":"héllo 👋 \\u0000 ✓"}', "x".repeat(70_000), "{}"];

  test("match the standardwebhooks package's, for secrets with and without the whsec_ prefix", () => {
    for (let i = 0; i < 20; i++) {
      const raw = randomBytes(24 + i).toString("base64");
      for (const secret of [`whsec_${raw}`, raw]) {
        const ours = new WebhookSigner(secret);
        const theirs = new Webhook(secret);
        for (const body of bodies)
          expect(ours.sign(`msg_${i}`, sentAt, body)).toBe(theirs.sign(`msg_${i}`, sentAt, body));
      }
    }
  });

  test("verify with the package, as a receiver would", () => {
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const now = new Date();
    const body = '{"type":"post.published","data":{"id":"x"}}';
    const headers = {
      "webhook-id": "evt_1",
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new WebhookSigner(secret).sign("evt_1", now, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(`whsec_${randomBytes(32).toString("base64")}`).verify(body, headers)).toThrow();
  });

  test("an empty secret is refused, as the package refuses it", () => {
    expect(() => new WebhookSigner("whsec_")).toThrow();
  });
});
