/**
 * Every page of the dashboard as everyone uses it: axe-core finds no serious or critical violation at a
 * desktop's 1280 px and a phone's 375 px, nothing is wider than a phone's screen, the calendar is a list of
 * days there, and a post can be published with the keyboard alone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { createKey } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import {
  accessibilityProblems,
  connectBluesky,
  haveChromium,
  signedInDashboard,
  type SignedInDashboard,
} from "../support/browser-kit.ts";

describe.skipIf(!haveChromium)("the dashboard for everyone", () => {
  let d: SignedInDashboard;
  let token = "";
  let postId = "";
  let accountId = "";
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${d.h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as any;
  };
  // The pages with their h1; the post page is added once a post exists.
  const pages = () => [
    ["/compose", "Compose"],
    ["/calendar", "Calendar"],
    ["/posts", "Posts"],
    [`/posts/${postId}`, "Post"],
    ["/analytics", "Analytics"],
    ["/drafts", "Drafts"],
    ["/media", "Media"],
    ["/import", "Import posts"],
    ["/workflows", "Workflows"],
    ["/webhooks", "Webhooks"],
    ["/accounts", "Accounts"],
    ["/preferences", "Preferences"],
  ];

  beforeAll(async () => {
    d = await signedInDashboard("ida@example.com");
    ({ token } = await createKey(d.h.db, { name: "test", profileId: d.profileId, scopes: [...SCOPES] }));
    await connectBluesky(d.page);
    accountId = (await api("GET", "/v1/accounts")).data[0].id;
    const tomorrow = new Date(Date.now() + 86_400_000);
    tomorrow.setHours(10, 0, 0, 0);
    postId = (
      await api("POST", "/v1/posts", {
        content: "Tomorrow's announcement",
        publish_at: tomorrow.toISOString(),
        targets: [{ account_id: accountId, first_comment: "More at example.com" }],
      })
    ).data.id;
    await api("POST", "/v1/drafts", { content: "An idea" });
  });
  afterAll(async () => {
    await d?.stop();
  });

  const visit = async (p: Page, path: string, heading: string) => {
    await p.goto(`${d.h.url}${path}`);
    await p.getByRole("heading", { name: heading, level: 1 }).waitFor();
    // Let the page's data arrive before it is judged.
    await p.waitForLoadState("networkidle");
  };

  test("axe-core: no serious or critical violation on any page, on a desktop, and none wider than 1280 px", async () => {
    const found: Record<string, { axe: string[]; width: number }> = {};
    for (const [path, heading] of pages()) {
      await visit(d.page, path, heading);
      found[path] = {
        axe: await accessibilityProblems(d.page),
        width: await d.page.evaluate(() => document.documentElement.scrollWidth),
      };
    }
    expect(found).toEqual(Object.fromEntries(pages().map(([path]) => [path, { axe: [], width: 1280 }])));
  });

  test("on a 375 px phone: no violation, nothing wider than the screen, and the calendar is a list", async () => {
    const p = await d.browser.newPage();
    await p.setViewportSize({ width: 375, height: 812 });
    const found: Record<string, { axe: string[]; wide: string[] }> = {};
    for (const [path, heading] of pages()) {
      await visit(p, path, heading);
      found[path] = {
        axe: await accessibilityProblems(p),
        // What sticks out past the screen's edge, other than inside a region that scrolls sideways itself.
        wide: await p.evaluate(() =>
          [...document.querySelectorAll("body *")]
            .filter((e) => e.getBoundingClientRect().right > 376)
            .filter((e) => {
              for (let a = e.parentElement; a; a = a.parentElement)
                if (["auto", "scroll"].includes(getComputedStyle(a).overflowX))
                  return a.getBoundingClientRect().right > 376;
              return true;
            })
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}`)
            .slice(0, 5),
        ),
      };
    }
    expect(found).toEqual(Object.fromEntries(pages().map(([path]) => [path, { axe: [], wide: [] }])));
    // The calendar lists the days that have posts, each named in full, with the post's time.
    await visit(p, "/calendar", "Calendar");
    if (!(await p.locator(`a.event[data-post="${postId}"]`).isVisible())) await p.getByLabel("Next").click();
    const day = p.locator("li.day", { has: p.locator(`a.event[data-post="${postId}"]`) });
    await day.waitFor();
    expect(await day.locator(".date-long").isVisible()).toBe(true);
    expect(await p.locator("li.day:visible").count()).toBeLessThanOrEqual(2);
    await d.shot("calendar-phone", p);
    await p.close();
  });

  test("a post can be written and published with the keyboard alone", async () => {
    const p = await d.browser.newPage();
    await visit(p, "/compose", "Compose");
    await p.getByLabel("Text", { exact: true }).focus();
    await p.keyboard.type("Typed without a mouse");
    // Tab onwards to the account's checkbox and tick it with the space bar.
    for (let i = 0; i < 30 && !(await p.evaluate(() => document.activeElement?.id?.startsWith("t-"))); i++)
      await p.keyboard.press("Tab");
    await p.keyboard.press("Space");
    expect(await p.locator(".targets input[type=checkbox]").first().isChecked()).toBe(true);
    // Then to "Publish now", and Enter.
    for (
      let i = 0;
      i < 40 && (await p.evaluate(() => document.activeElement?.textContent?.trim())) !== "Publish now";
      i++
    )
      await p.keyboard.press("Tab");
    await p.keyboard.press("Enter");
    await p.waitForURL(/\/posts\/[0-9a-f-]{36}$/);
    const post = await api("GET", `/v1/posts/${p.url().split("/").pop()}`);
    expect(post.data.content).toBe("Typed without a mouse");
    await p.close();
  });
});
