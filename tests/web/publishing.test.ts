/**
 * The dashboard's scheduling features in Chromium, as a social media manager uses them over a sandbox
 * profile: an account's posting queue, "Add to queue", a first comment, a repeating post, and a CSV
 * import checked before it is imported. What the pages did is read back through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { connectBluesky, haveChromium, signedInDashboard, type SignedInDashboard } from "../support/browser-kit.ts";
import { until } from "../support/until.ts";

describe.skipIf(!haveChromium)("scheduling features in the dashboard", () => {
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
    await d?.stop();
  });

  test("the accounts page keeps a posting queue: weekly slots in a time zone, and the next free ones", async () => {
    const { page } = d;
    await page.getByText("Posting queue").click();
    await page.getByLabel("Time zone").selectOption("Europe/Berlin");
    for (const [i, day, time] of [
      [1, "mon", "09:00"],
      [2, "thu", "17:30"],
    ] as const) {
      await page.getByRole("button", { name: "Add a slot" }).click();
      await page.getByLabel(`Slot ${i} day`).selectOption(day);
      await page.getByLabel(`Slot ${i} time`).fill(time);
    }
    await page.getByRole("button", { name: "Save queue" }).click();
    await page.getByText("Queue saved.").waitFor();
    const queue = (await api("GET", `/v1/accounts/${accountId}/queue`)).body.data;
    expect(queue.time_zone).toBe("Europe/Berlin");
    expect(queue.slots).toEqual([
      { day: "mon", time: "09:00" },
      { day: "thu", time: "17:30" },
    ]);
    // The next free slots are listed, each at 09:00 or 17:30 Berlin time.
    const next = page.getByRole("list", { name: /Next free slots/ }).locator("li");
    await until("five free slots listed", async () => ((await next.count()) === 5 ? true : undefined));
    expect(await next.first().textContent()).toMatch(/(09:00|17:30) Europe\/Berlin/);
    await d.shot("accounts-queue");
  });

  test("compose: a post with a first comment goes to the next free queue slot", async () => {
    const { page } = d;
    const [slot] = (await api("GET", `/v1/accounts/${accountId}/queue/next?count=1`)).body.data;
    await page.getByRole("link", { name: "Compose" }).click();
    await page.getByLabel("Text", { exact: true }).fill("Our spring catalogue is out");
    await page.locator(".targets input[type=checkbox]").first().check();
    await page.getByText(/Customise for/).click();
    await page.getByLabel(/First comment/).fill("Browse it here: https://example.com/spring");
    await d.shot("compose-first-comment");
    await page.getByRole("button", { name: "Add to queue" }).click();
    await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/);
    const post = (await api("GET", `/v1/posts/${page.url().split("/").pop()}`)).body.data;
    expect(post.status).toBe("scheduled");
    expect(post.publish_at).toBe(slot.at);
    expect(post.targets[0].first_comment).toMatchObject({
      text: "Browse it here: https://example.com/spring",
      status: "waiting",
    });
    // The post's page says where it sits in the queue and what its first comment is waiting for.
    await page.getByText("In the posting queue").waitFor();
    expect(await page.locator(".first-comment").textContent()).toContain("waits for the post");
    await d.shot("post-first-comment");
    // The slot is taken: the queue's next free slot is a later one.
    const [after] = (await api("GET", `/v1/accounts/${accountId}/queue/next?count=1`)).body.data;
    expect(new Date(after.at).getTime()).toBeGreaterThan(new Date(slot.at).getTime());
  });

  test("compose: a weekly repeating post becomes a series", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "Compose" }).click();
    await page.getByLabel("Text", { exact: true }).fill("Monday tip: schedule ahead");
    await page.locator(".targets input[type=checkbox]").first().check();
    const first = new Date();
    first.setDate(first.getDate() + ((8 - first.getDay()) % 7 || 7));
    first.setHours(9, 0, 0, 0);
    const pad = (n: number) => String(n).padStart(2, "0");
    await page
      .getByLabel(/Schedule for/)
      .fill(`${first.getFullYear()}-${pad(first.getMonth() + 1)}-${pad(first.getDate())}T09:00`);
    await page.getByLabel("How often").selectOption("weekly");
    await page.getByLabel("Mon").check();
    await page.getByLabel("Wed").check();
    await page.getByLabel("Number of posts in the series").fill("6");
    await d.shot("compose-repeat");
    await page.getByRole("button", { name: "Schedule the series" }).click();
    await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/);
    const post = (await api("GET", `/v1/posts/${page.url().split("/").pop()}`)).body.data;
    expect(post.series_id).toBeString();
    await page.getByText("Part of a repeating series").waitFor();
    expect(new Date(post.publish_at).getTime()).toBe(first.getTime());
    const series = (await api("GET", `/v1/series/${post.series_id}`)).body.data;
    expect(series.rule).toBe("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6");
    expect(series.time_zone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(series.next_occurrences).toHaveLength(5);
  });

  test("import: a CSV is checked row by row, fixed, imported, and importing it again creates nothing twice", async () => {
    const { page } = d;
    const when = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const csv = (second: string) =>
      `content,publish_at,account_ids\n"First imported post",${when},${accountId}\n"${second}",${when},${accountId}\n`;
    const before = (await api("GET", "/v1/posts?limit=100")).body.data.length;
    await page.getByRole("link", { name: "Import" }).click();
    await page.setInputFiles("#import-file", {
      name: "posts.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(csv("x".repeat(400))),
    });
    await page.getByRole("button", { name: "Check the file" }).click();
    // Row 3 (as a spreadsheet numbers it) is too long for Bluesky; row 2 is ready; nothing is created.
    await page.locator("tr[data-row='3'] .problem[data-code=content_too_long]").waitFor();
    expect(await page.locator("tr[data-row='2']").textContent()).toContain("ready");
    expect(await page.getByRole("button", { name: /^Import/ }).isDisabled()).toBe(true);
    await d.shot("import-check");
    expect((await api("GET", "/v1/posts?limit=100")).body.data.length).toBe(before);

    const fixed = { name: "posts.csv", mimeType: "text/csv", buffer: Buffer.from(csv("Second imported post")) };
    await page.setInputFiles("#import-file", fixed);
    await page.getByRole("button", { name: "Check the file" }).click();
    await page.getByText("2 rows: 2 ready").waitFor();
    await page.getByRole("button", { name: "Import 2 posts" }).click();
    await page.getByText("2 rows: 2 created").waitFor();
    await d.shot("import-done");
    expect((await api("GET", "/v1/posts?limit=100")).body.data.length).toBe(before + 2);

    // The same file again: both rows are already imported.
    await page.setInputFiles("#import-file", fixed);
    await page.getByRole("button", { name: "Check the file" }).click();
    await page.getByRole("button", { name: "Import 2 posts" }).click();
    await page.getByText(/2 already imported/).waitFor();
    expect((await api("GET", "/v1/posts?limit=100")).body.data.length).toBe(before + 2);
  });

  test("the accounts page offers all 19 platforms; a Mastodon account connects through its server's page", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "Accounts" }).click();
    const buttons = page.locator(".platform-grid button");
    await until("the platform grid", async () => ((await buttons.count()) > 0 ? true : undefined));
    // Each button's label (its icon's letters are drawn in SVG and hidden from assistive technology).
    const names = await buttons.evaluateAll((bs) => bs.map((b) => b.querySelector("span")?.textContent ?? ""));
    expect(names).toHaveLength(19);
    // The upstream API's fifteen first, then Crier's extensions.
    expect(names.slice(15).map((n) => n.trim())).toEqual([
      "Connect Mastodon",
      "Connect Google Business Profile",
      "Connect Discord",
      "Connect Slack",
    ]);
    await page.getByRole("button", { name: "Connect Mastodon" }).click();
    await page.getByLabel("Your server").fill("social.example");
    await page.getByRole("button", { name: /Connect|Continue/ }).click();
    await page.getByRole("link", { name: "Back to the accounts in the dashboard" }).click();
    await page.locator("li.account", { hasText: "@social.example" }).waitFor();
    await d.shot("accounts-mastodon");
  });

  test("the new pages work on a phone-sized screen", async () => {
    const p = await d.browser.newPage();
    await p.setViewportSize({ width: 375, height: 812 });
    for (const [path, heading] of [
      ["/compose", "Compose"],
      ["/import", "Import posts"],
      ["/accounts", "Accounts"],
    ] as const) {
      await p.goto(`${d.h.url}${path}`);
      await p.getByRole("heading", { name: heading, level: 1 }).waitFor();
      // Nothing wider than the screen: no sideways scrolling.
      const wide = await p.evaluate(() =>
        [...document.querySelectorAll("body *")]
          .filter((e) => e.getBoundingClientRect().right > 376)
          .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)
          .slice(0, 8),
      );
      expect({ path, wide }).toEqual({ path, wide: [] });
      await d.shot(`${path.slice(1)}-phone`, p);
    }
    await p.close();
  });
});
