/**
 * Account health in Chromium over a sandbox profile: the marked sandbox header with its inbox link on
 * every page, the banner naming an account whose access ends before its scheduled post, the accounts
 * page's expiry, Reconnect and "Check now" facts. Data is made through the API and the database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { decryptJson } from "../../src/db/crypto.ts";
import { accounts } from "../../src/db/schema.ts";
import { accountCredentials } from "../../src/modules/accounts/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { createKey } from "../../src/modules/keys/service.ts";
import {
  accessibilityProblems,
  connectBluesky,
  haveChromium,
  signedInDashboard,
  type SignedInDashboard,
} from "../support/browser-kit.ts";
import { followAuthorization } from "../support/connect-kit.ts";

describe.skipIf(!haveChromium)("account health in the dashboard", () => {
  let d: SignedInDashboard;
  let token = "";
  let accountId = "";
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${d.h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    d = await signedInDashboard();
    ({ token } = await createKey(d.h.db, { name: "test", profileId: d.profileId, scopes: [...SCOPES] }));
    await connectBluesky(d.page);
    accountId = (await api("GET", "/v1/accounts")).body.data[0].id;
  });
  afterAll(async () => {
    await d?.page.setViewportSize({ width: 1280, height: 860 });
    await d?.stop();
  });

  test("a sandbox profile's pages carry a marked Sandbox bar linking its inbox", async () => {
    const { page } = d;
    for (const nav of ["Compose", "Posts", "Accounts"]) {
      await page.getByRole("link", { name: nav, exact: true }).click();
      const bar = page.getByRole("region", { name: "Sandbox" });
      await bar.waitFor();
      expect(await bar.textContent()).toContain("never to real platforms");
      expect(await bar.getByRole("link", { name: "Open the sandbox inbox" }).getAttribute("href")).toBe("/sandbox");
    }
    // The inbox explains how a browser signs in to it (a key's one-time link), rather than failing blankly.
    await page.getByRole("link", { name: "Open the sandbox inbox" }).click();
    await page.waitForURL(/\/sandbox$/);
    expect(await page.textContent("body")).toContain("crier keys inbox-link");
    await page.goBack();
    await page.getByRole("heading", { name: "Accounts", level: 1 }).waitFor();
  });

  test("no banner while the account's access outlives its scheduled post", async () => {
    const due = new Date(Date.now() + 10 * 86_400_000);
    const r = await api("POST", "/v1/posts", {
      content: "Autumn sale starts",
      publish_at: due.toISOString(),
      targets: [{ account_id: accountId }],
    });
    expect(r.status).toBe(201);
    await d.h.db.db
      .update(accounts)
      .set({ credentialsExpireAt: new Date(Date.now() + 40 * 86_400_000) })
      .where(eq(accounts.id, accountId));
    await d.page.reload();
    await d.page.getByRole("heading", { name: "Accounts", level: 1 }).waitFor();
    await d.page.locator("li.account .expiry").waitFor();
    expect(await d.page.locator(".at-risk").count()).toBe(0);
    expect(await d.page.locator("li.account .expiry").textContent()).toContain("expires in 40 days");
    expect(await d.page.getByRole("button", { name: /^Reconnect/ }).count()).toBe(0);
  });

  test("access ending before a scheduled post: a banner on every page names the account and leads to Reconnect", async () => {
    const { page } = d;
    await d.h.db.db
      .update(accounts)
      .set({ credentialsExpireAt: new Date(Date.now() + 3 * 86_400_000 + 3_600_000) })
      .where(eq(accounts.id, accountId));
    await page.reload();
    const banner = page.getByRole("region", { name: /will miss scheduled posts/ });
    await banner.waitFor();
    expect(await banner.textContent()).toContain("acme.bsky.social");
    expect(await banner.textContent()).toContain("1 scheduled post will not publish");
    // Every page, after client-side navigation too.
    await page.getByRole("link", { name: "Posts", exact: true }).click();
    await page.getByRole("heading", { name: "Posts", level: 1 }).waitFor();
    await banner.waitFor();
    await banner.getByRole("link", { name: /Reconnect/ }).click();
    await page.getByRole("heading", { name: "Accounts", level: 1 }).waitFor();
    const card = page.locator("li.account", { hasText: "acme.bsky.social" });
    expect(await card.locator(".expiry").textContent()).toContain("expires in 3 days");
    await card.getByRole("button", { name: /^Reconnect/ }).waitFor();
  });

  test("Check now shows what the platform says: the token works and what the account can publish", async () => {
    const { page } = d;
    const card = page.locator("li.account", { hasText: "acme.bsky.social" });
    await card.getByRole("button", { name: /Check now/ }).click();
    const result = card.getByRole("status", { name: /Check of/ });
    await result.waitFor();
    expect(await result.textContent()).toContain("the token works");
    expect(await result.textContent()).toContain("It can publish.");
    const kinds = await card.getByRole("list", { name: "Can publish" }).locator("li").allTextContents();
    expect(kinds).toContain("Text: yes");
    expect(kinds).toContain("Images: yes");
    // The page shows what the API answers.
    const check = (await api("GET", `/v1/accounts/${accountId}/check`)).body.data;
    expect(check).toMatchObject({ token: "valid", can_publish: true });
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("accounts-health");
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("accounts-health-phone");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  test("a token without the publishing scope: Check now names the missing scope, and Reconnect is offered", async () => {
    const { page } = d;
    const started = await api("POST", "/v1/accounts/connect/twitter");
    expect((await followAuthorization(started.body.data.authorization_url)).status).toBe(200);
    const x = (await api("GET", "/v1/accounts")).body.data.find((a: any) => a.platform === "twitter");
    // The stored grant lacks tweet.write, as when a user unticks it on the platform's consent page.
    const [row] = await d.h.db.db.select().from(accounts).where(eq(accounts.id, x.id));
    const creds = decryptJson<Record<string, unknown>>(d.h.ctx.config.secretKey, row.credentials!);
    await accountCredentials(d.h.ctx).save(x.id, { ...creds, scope: "tweet.read users.read offline.access" });
    await page.reload();
    const card = page.locator("li.account", { hasText: x.username });
    await card.getByRole("button", { name: /Check now/ }).click();
    const result = card.getByRole("status", { name: /Check of/ });
    await result.waitFor();
    expect(await result.textContent()).toContain("It cannot publish.");
    const missing = await card.getByRole("list", { name: "Scopes missing" }).textContent();
    expect(missing).toContain("publish is missing the scope(s) tweet.write");
    expect(await card.getByRole("list", { name: "Can publish" }).locator("li").allTextContents()).toContain("Text: no");
    await card.getByRole("button", { name: /^Reconnect/ }).waitFor();
    expect(await accessibilityProblems(page)).toEqual([]);
  });
});
