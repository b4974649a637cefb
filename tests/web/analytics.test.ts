/**
 * The dashboard's analytics page in Chromium over a sandbox profile: posts published by the engine to the
 * X and Bluesky emulators over ten days, numbers set on the emulators and read by the engine's
 * collection, then the page as a person uses it: the range, the accounts' figures and what to do about
 * them, the chart's numbers as text, the sortable table, and a post's page with its numbers per target.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { collectAnalytics } from "../../src/engine/analytics.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { sharp } from "../../src/media/tools.ts";
import { createKey } from "../../src/modules/keys/service.ts";
import type { BlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import type { XEmulator } from "../../plugins/twitter/emulator.ts";
import {
  accessibilityProblems,
  connectBluesky,
  haveChromium,
  signedInDashboard,
  type SignedInDashboard,
} from "../support/browser-kit.ts";
import { followAuthorization } from "../support/connect-kit.ts";
import { until } from "../support/until.ts";

const DAY = 24 * 3600_000;

describe.skipIf(!haveChromium)("the analytics page", () => {
  let d: SignedInDashboard;
  let token = "";
  let x: XEmulator;
  let bsky: BlueskyEmulator;
  const ids: Record<string, string> = {};
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${d.h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  /** A picture of one colour, uploaded to Crier's media: the post's thumbnail in the table. */
  async function picture(r: number, g: number, b: number): Promise<string> {
    const lib = await sharp();
    const jpeg = await lib({ create: { width: 400, height: 400, channels: 3, background: { r, g, b } } })
      .jpeg()
      .toBuffer();
    const ticket = await api("POST", "/v1/media/uploads", { filename: "photo.jpg", content_type: "image/jpeg" });
    const put = await fetch(ticket.body.data.upload.signedUrl, {
      method: "PUT",
      headers: { "content-type": "image/jpeg" },
      body: Uint8Array.from(jpeg),
    });
    expect(put.ok).toBe(true);
    return (await api("GET", `/v1/media/${ticket.body.data.media_id}`)).body.data.public_url;
  }

  /** A post through the API, published by the engine; its copies' platform ids by platform. */
  async function publish(content: string, accountIds: string[], colour?: [number, number, number]) {
    const media = colour ? [{ url: await picture(...colour), type: "image" }] : [];
    const created = await api("POST", "/v1/posts", {
      content,
      media,
      targets: accountIds.map((account_id) => ({ account_id })),
    });
    expect(created.status).toBe(201);
    // A picture is processed before it goes out: run the engine until the post is out.
    const post = await until("the post published", async () => {
      const engine = createEngine(d.h.ctx, { random: () => 0.5 });
      await engine.runUntilIdle();
      await engine.stop();
      const p = (await api("GET", `/v1/posts/${created.body.data.id}`)).body.data;
      return p.status === "published" ? p : undefined;
    });
    ids[content] = post.id;
    return Object.fromEntries(post.targets.map((t: any) => [t.platform, t.platform_post_id])) as Record<string, string>;
  }

  beforeAll(async () => {
    d = await signedInDashboard();
    ({ token } = await createKey(d.h.db, { name: "test", profileId: d.profileId, scopes: [...SCOPES] }));
    await connectBluesky(d.page);
    const connect = await api("POST", "/v1/accounts/connect/twitter");
    expect((await followAuthorization(connect.body.data.authorization_url)).html).toContain("Account connected");
    const accounts = (await api("GET", "/v1/accounts")).body.data as { id: string; platform: string }[];
    const xId = accounts.find((a) => a.platform === "twitter")!.id;
    const bskyId = accounts.find((a) => a.platform === "bluesky")!.id;
    x = d.h.ctx.platforms.emulatorFor("twitter", d.profileId) as XEmulator;
    bsky = d.h.ctx.platforms.emulatorFor("bluesky", d.profileId) as BlueskyEmulator;
    x.setFollowers!(12_400);
    bsky.setFollowers!(830);

    // Ten days ago, then one post a day for the last four days.
    const old = await publish("Winter sale recap", [xId]);
    x.engage(old.twitter, { impressions: 900, likes: 30 });
    d.h.clock.advance(6 * DAY);
    const plan: [string, number, number, [number, number, number]][] = [
      ["Spring catalogue is out", 4200, 310, [120, 190, 90]],
      ["Behind the scenes at the studio", 1500, 45, [200, 120, 60]],
      ["Five tips for better product photos", 2600, 190, [60, 110, 200]],
      ["Thank you for 12k followers", 800, 120, [190, 70, 120]],
    ];
    for (const [content, views, likes, colour] of plan) {
      d.h.clock.advance(DAY);
      const copies = await publish(content, [xId, bskyId], colour);
      x.engage(copies.twitter, { impressions: views, likes, reposts: Math.round(likes / 10) });
      bsky.engage(copies.bluesky, { likes: Math.round(likes / 3), reposts: 2 });
    }
    await collectAnalytics(d.h.ctx, { claimedBy: "test" });
    // X then refuses the numbers needing a permission: the page says what to do about it.
    d.h.clock.advance(2 * 3600_000);
    x.failNext({ kind: "forbidden", on: "/2/tweets" });
    await collectAnalytics(d.h.ctx, { claimedBy: "test" });
  });
  afterAll(async () => {
    await d?.stop();
  });

  test("the overview: accounts' figures, what to do about them, the chart's numbers as text, 30 and 7 days", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "Analytics" }).click();
    await page.getByRole("heading", { name: "Analytics", level: 1 }).waitFor();
    const rows = page.locator("table.analytics-posts tbody tr");
    await rows.nth(4).waitFor();
    // Each post made with a picture shows it; the one without has an empty frame.
    const thumbs = page.locator("table.analytics-posts img.thumb");
    expect(await thumbs.count()).toBe(4);
    await until(
      "the thumbnails loaded",
      async () =>
        (await thumbs.evaluateAll((imgs) => imgs.every((i) => (i as HTMLImageElement).naturalWidth > 0))) || undefined,
    );
    expect(await page.getByRole("button", { name: "30 days" }).getAttribute("aria-pressed")).toBe("true");

    const xCard = page.locator("li.analytics-account", { hasText: "twitter" });
    expect(await xCard.locator("dd").first().textContent()).toBe((12_400).toLocaleString());
    // Median of 900, 4200, 1500, 2600, 800.
    expect(await xCard.textContent()).toContain("Median views1,500");
    expect(await xCard.locator("[data-status=limited]").textContent()).toContain("reconnect it and allow access");
    const bCard = page.locator("li.analytics-account", { hasText: "bluesky" });
    expect(await bCard.textContent()).toContain("830");
    expect(await bCard.textContent()).toContain("A median needs 3 posts with views");

    // The charts are summarised for screen readers and their numbers are a table.
    const views = page.getByRole("img", { name: /Views: 10,000 in all; the most, 4,200/ });
    await views.waitFor();
    await page.getByText("The numbers per day").click();
    const perDay = page.locator("details.day-numbers tbody tr");
    expect(await perDay.count()).toBe(5);
    expect(await perDay.last().locator("td").allTextContents()).toEqual(["2", "800", (120 + 12 + 40 + 2).toString()]);

    await d.shot("analytics");
    expect(await accessibilityProblems(page)).toEqual([]);

    // 7 days: the post of ten days ago leaves, and the request asked the browser's time zone's days.
    const asked = page.waitForRequest((r) => r.url().includes("/v1/analytics?days=7"));
    await page.getByRole("button", { name: "7 days" }).click();
    expect(new URL((await asked).url()).searchParams.get("time_zone")).toBe(
      await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone),
    );
    await page.getByRole("button", { name: "7 days" }).and(page.locator("[aria-pressed=true]")).waitFor();
    await page.locator("table.analytics-posts tbody tr", { hasText: "Winter sale" }).waitFor({ state: "detached" });
    expect(await rows.count()).toBe(4);
  });

  test("the posts sort by each column with the keyboard; a title leads to the post's numbers", async () => {
    const { page } = d;
    const titles = () => page.locator("table.analytics-posts tbody tr a").allTextContents();
    await page.getByRole("button", { name: "Views", exact: true }).focus();
    await page.keyboard.press("Enter");
    const viewsHeader = page.locator("th", { has: page.getByRole("button", { name: "Views", exact: true }) });
    expect(await viewsHeader.getAttribute("aria-sort")).toBe("descending");
    expect((await titles())[0]).toBe("Spring catalogue is out");
    await page.keyboard.press("Enter");
    expect(await viewsHeader.getAttribute("aria-sort")).toBe("ascending");
    expect((await titles())[0]).toBe("Thank you for 12k followers");
    // Engagement: (120+12) / 800 is the best rate of the four.
    await page.getByRole("button", { name: "Engagement rate" }).click();
    expect((await titles())[0]).toBe("Thank you for 12k followers");
    expect(await page.locator("table.analytics-posts tbody tr").first().locator("td.num").nth(1).textContent()).toMatch(
      /16\.5\s?%/,
    );
    await page.getByRole("button", { name: "Post", exact: true }).click();
    expect(await titles()).toEqual([...(await titles())].sort((a, b) => a.localeCompare(b)));

    await page.setViewportSize({ width: 375, height: 800 });
    await d.shot("analytics-phone");
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 860 });

    // The newest post, read again when X refused: its numbers stay, with what to do.
    await page.getByRole("link", { name: "Thank you for 12k followers" }).click();
    await page.waitForURL(new RegExp(`/posts/${ids["Thank you for 12k followers"]}$`));
    const numbers = page.locator("section.post-numbers");
    const xNumbers = numbers.locator("li[data-platform=twitter]");
    await xNumbers.waitFor();
    expect(await xNumbers.textContent()).toContain("Views800");
    expect(await xNumbers.textContent()).toContain("Likes120");
    expect(await xNumbers.textContent()).toMatch(/Last read /);
    expect(await xNumbers.locator("[data-status=limited]").count()).toBe(1);
    // Bluesky gives no views: none shown rather than a 0.
    const bNumbers = numbers.locator("li[data-platform=bluesky]");
    expect(await bNumbers.textContent()).not.toContain("Views");
    expect(await bNumbers.textContent()).toContain("Likes40");
    await d.shot("post-numbers");
    // The post page with its numbers, status badges included (their colours meet 4.5:1).
    expect(await accessibilityProblems(page)).toEqual([]);
  });

  test("reading the numbers now: the page says it is reading; asked again too soon, the API's answer is shown", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "Analytics" }).click();
    await page.locator("table.analytics-posts tbody tr").first().waitFor();
    await page.getByRole("button", { name: "Read the numbers now" }).click();
    await page.getByText("Crier is reading the latest numbers").waitFor();
    await page.getByRole("button", { name: "Read the numbers now" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("less than 5 minutes ago");
    expect(await alert.textContent()).toContain("numbers are also read in the background");
  });
});
