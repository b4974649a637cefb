/**
 * The webhooks page in Chromium over a sandbox profile, against a receiver on 127.0.0.1 (so the server
 * allows private addresses, as WEBHOOK_ALLOW_PRIVATE=true does): an endpoint added (a bad URL refused
 * beside its field, the secret shown once and good for verifying), a test event that fails and is
 * redelivered, the deliveries with their attempts, and a secret rotation. Read back through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { Engine } from "../../src/engine/scheduler.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { createKey } from "../../src/modules/keys/service.ts";
import {
  accessibilityProblems,
  connectBluesky,
  haveChromium,
  signedInDashboard,
  type SignedInDashboard,
} from "../support/browser-kit.ts";
import { startReceiver, type Receiver } from "../support/webhook-receiver.ts";

describe.skipIf(!haveChromium)("webhooks in the dashboard", () => {
  let d: SignedInDashboard;
  let rx: Receiver;
  let token = "";
  let hookId = "";
  let secret = "";
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${d.h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const deliveries = async () => (await api("GET", `/v1/webhooks/${hookId}/deliveries`)).body.data as any[];

  beforeAll(async () => {
    d = await signedInDashboard();
    d.h.ctx.config.webhookAllowPrivate = true;
    rx = startReceiver();
    ({ token } = await createKey(d.h.db, { name: "test", profileId: d.profileId, scopes: [...SCOPES] }));
  });
  afterAll(async () => {
    await d?.stop();
    await rx?.stop();
  });

  test("an endpoint is added: a bad URL is refused beside its field, then the secret is shown once", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByRole("button", { name: "New endpoint" }).click();
    await page.getByLabel("Endpoint URL").fill("ftp://example.com/hook");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const beside = page.locator('[data-path="url"] .note.error');
    await beside.waitFor();
    expect(await beside.textContent()).toContain("url");
    expect((await api("GET", "/v1/webhooks")).body.data).toEqual([]);

    await page.getByLabel("Endpoint URL").fill(rx.url);
    await page.getByLabel("Description (optional)").fill("Our CRM");
    await page.getByLabel("All events").uncheck();
    await page.getByLabel("account.connected").check();
    await page.getByLabel("post.published").check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    secret = await page.getByLabel("Signing secret").inputValue();
    expect(secret).toMatch(/^whsec_/);
    const [hook] = (await api("GET", "/v1/webhooks")).body.data;
    hookId = hook.id;
    expect(hook).toMatchObject({ url: rx.url, description: "Our CRM", is_active: true });
    expect(hook.events.sort()).toEqual(["account.connected", "post.published"]);
    expect(hook.secret).toBeUndefined();
    await page.locator(".webhook").getByText("Events: account.connected, post.published").waitFor();

    // An event it subscribed to arrives signed with the secret the page showed.
    await page.getByRole("link", { name: "Accounts" }).click();
    await connectBluesky(page, "hooks.bsky.social");
    await (d.h.ctx.dispatch as unknown as Engine).runUntilIdle();
    const [connected] = rx.ofType("account.connected");
    const verified = new Webhook(secret).verify(connected.body, {
      "webhook-id": connected.headers["webhook-id"],
      "webhook-timestamp": connected.headers["webhook-timestamp"],
      "webhook-signature": connected.headers["webhook-signature"],
    }) as { type: string };
    expect(verified.type).toBe("account.connected");
  });

  test("a test event fails, shows its attempt and the answer, and is redelivered", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "Webhooks" }).click();
    const endpoint = page.locator(".webhook");
    await endpoint.waitFor();
    rx.script({ status: 503, body: "receiver is down for maintenance" });
    await endpoint.getByRole("button", { name: "Send a test event" }).click();
    await page.getByText("Test event sent: pending.").waitFor();
    const test = endpoint.locator(".delivery[data-event='webhook.test']");
    await test.locator(".attempt").first().waitFor();
    expect(await test.locator(".attempt").first().textContent()).toContain("HTTP 503");
    expect(await test.locator("pre.excerpt").first().textContent()).toBe("receiver is down for maintenance");
    expect(await test.getAttribute("data-status")).toBe("pending");

    d.h.clock.advance(60_000);
    await test.getByRole("button", { name: /Redeliver/ }).click();
    await endpoint.locator(".delivery[data-event='webhook.test'][data-status=delivered]").waitFor();
    expect(await test.locator(".attempt").count()).toBe(2);
    expect(await test.textContent()).toContain("2 attempts");
    const sent = (await deliveries()).find((x) => x.event === "webhook.test");
    expect(sent.status).toBe("delivered");
    const byTime = [...sent.attempts].sort((a: any, b: any) => a.attempted_at.localeCompare(b.attempted_at));
    expect(byTime.map((a: any) => a.status_code)).toEqual([503, 200]);
    // Both attempts carried the same webhook-id: the receiver can tell it is one event.
    const tests = rx.ofType("webhook.test");
    expect(tests).toHaveLength(2);
    expect(tests[0].headers["webhook-id"]).toBe(tests[1].headers["webhook-id"]);
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("webhooks");
  });

  test("rotating the secret shows the new one once; the old one still signs for a day", async () => {
    const { page } = d;
    const endpoint = page.locator(".webhook");
    await endpoint.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate secret" }).click();
    const shown = endpoint.getByLabel("Signing secret");
    await shown.waitFor();
    const fresh = await shown.inputValue();
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    expect((await api("GET", `/v1/webhooks/${hookId}`)).body.data.previous_secret_expires_at).toBeString();
    await endpoint.getByText(/previous secret also signs until/).waitFor();
    // The next delivery verifies with the new secret.
    await endpoint.getByRole("button", { name: "Send a test event" }).click();
    await page.getByText("Test event sent: delivered.").waitFor();
    const last = rx.ofType("webhook.test").at(-1)!;
    expect(
      new Webhook(fresh).verify(last.body, {
        "webhook-id": last.headers["webhook-id"],
        "webhook-timestamp": last.headers["webhook-timestamp"],
        "webhook-signature": last.headers["webhook-signature"],
      }),
    ).toMatchObject({ type: "webhook.test" });
  });

  test("the page at 375 px: nothing wider than the screen, no accessibility problems", async () => {
    const p = await d.browser.newPage();
    await p.setViewportSize({ width: 375, height: 812 });
    await p.goto(`${d.h.url}/webhooks`);
    await p.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await p.locator(".delivery").first().waitFor();
    const wide = await p.evaluate(() =>
      [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > 376)
        .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)
        .slice(0, 8),
    );
    expect(wide).toEqual([]);
    expect(await accessibilityProblems(p)).toEqual([]);
    await d.shot("webhooks-phone", p);
    await p.close();
  });
});
