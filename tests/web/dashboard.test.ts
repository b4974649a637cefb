/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core against a listening Crier
 * (real HTTP, real database, the sandbox emulators, an engine). Screenshots of every page land in
 * tests/output/dashboard/ for a reviewer; the compose and calendar ones are also the README's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { adminCommands } from "../../src/cli/commands.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { MAX_FAILURES_PER_USER } from "../../src/modules/users/throttle.ts";
import { listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";
import { makePng } from "../support/media-fixtures.ts";
import { makeVideo } from "../support/media-files.ts";
import { until } from "../support/until.ts";

const CHROMIUM = "/usr/bin/chromium";
const ROOT = resolve(import.meta.dir, "../..");
const OUT = join(ROOT, "tests/output/dashboard");
const PASSWORD = "correct horse battery staple";

/** "2026-05-01": a date in the browser's (and this process's) time zone, as the calendar names its days. */
const localDay = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`\n*** SKIPPED the dashboard browser tests: ${CHROMIUM} is missing (apt-get install chromium) ***\n`);

describe.skipIf(!haveChromium)("dashboard in Chromium", () => {
  let h: ListeningHarness;
  let browser: BrowserContext;
  let page: Page;
  let link: string;
  let apiToken = "";
  let postId = "";
  let acmeId = "";

  const shot = async (name: string, p: Page = page) => {
    mkdirSync(OUT, { recursive: true });
    // From the top: a full-page shot of a scrolled page draws the sticky top bar over the content.
    await p.evaluate(() => window.scrollTo(0, 0));
    await p.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
  };
  const publish = (file: string) => {
    mkdirSync(join(ROOT, "docs/screenshots"), { recursive: true });
    copyFileSync(join(OUT, file), join(ROOT, "docs/screenshots", file));
  };
  const asKey = (path: string, init: RequestInit = {}) =>
    fetch(`${h.url}${path}`, { ...init, headers: { authorization: `Bearer ${apiToken}`, ...init.headers } });

  beforeAll(async () => {
    h = await listeningHarness();
    const engine = createEngine(h.ctx, { random: () => 0.5 });
    h.ctx.dispatch = engine;
    const profile = await createProfile(h.db, "Acme", true);
    acmeId = profile.id;
    link = (await adminCommands["users.create"](h.ctx, { email: "ada@example.com", profileId: profile.id })).link;
    browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "crier-chromium-")), {
      executablePath: CHROMIUM,
      viewport: { width: 1280, height: 860 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  test("a new user signs in from the one-time link by choosing a password", async () => {
    await page.goto(link);
    await page.getByText("ada@example.com").waitFor();
    await shot("welcome");
    await page.getByLabel("New password").fill(PASSWORD);
    await page.getByLabel("Repeat it").fill(PASSWORD);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("heading", { name: "Accounts", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/accounts");
    // The link is used up: opening it again says so.
    const again = await fetch(`${h.url}/auth/links/lookup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: link.split("#")[1] }),
    });
    expect(again.status).toBe(400);
    expect((await again.json()).error.code).toBe("link_invalid");
  });

  test("connects a sandbox Bluesky account through the hosted form and comes back to the list", async () => {
    await page.getByRole("button", { name: "Connect Bluesky" }).click();
    await page.waitForURL(/\/connect\/bluesky/);
    await page.getByLabel("Handle").fill("acme.bsky.social");
    await page.getByLabel("App password").fill("abcd-efgh-ijkl-mnop");
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByRole("link", { name: "Back to the accounts in the dashboard" }).click();
    await page.locator("li.account").first().waitFor();
    expect(await page.locator("li.account").count()).toBe(1);
    await expect(page.locator("li.account").first().textContent()).resolves.toContain("bluesky");
  });

  test("connects a sandbox OAuth platform (LinkedIn) through its redirect", async () => {
    await page.getByRole("button", { name: "Connect LinkedIn" }).click();
    await page.getByRole("link", { name: "Back to the accounts in the dashboard" }).click();
    await page.locator("li.account").nth(1).waitFor();
    const text = await page.locator("ul.cards").textContent();
    expect(text).toContain("linkedin");
    expect(text).toContain("active");
    await shot("accounts");
  });

  test("creates an API key, shows the token once, and the token works with fetch", async () => {
    await page.getByRole("link", { name: "Preferences" }).click();
    await page.getByLabel("Key name").fill("Reporting script");
    await page.getByLabel("posts:write").check();
    await page.getByRole("button", { name: "Create key" }).click();
    apiToken = (await page.locator("#new-token").textContent()) ?? "";
    expect(apiToken).toMatch(/^crier_sandbox_/);
    const res = await asKey("/v1/accounts");
    expect(res.status).toBe(200);
    // Bluesky, the LinkedIn member, and the company page the sandbox LinkedIn member administers.
    expect((await res.json()).data).toHaveLength(3);
    // The list shows the key with its last use, never the token again.
    await page.reload();
    await page.getByRole("cell", { name: "Reporting script" }).waitFor();
    expect(await page.content()).not.toContain(apiToken);
    const lastUsed = page.locator("table.list tbody tr").first().locator("td").nth(3);
    expect(await lastUsed.textContent()).not.toBe("never");
    await shot("preferences");
  });

  test("compose: an uploaded image to two accounts, scheduled in the user's time zone", async () => {
    await page.getByRole("link", { name: "Compose" }).click();
    await page.getByLabel("Text", { exact: true }).fill("Spring launch: the new Crier dashboard is here 🎉");
    await page.setInputFiles("#media-input", {
      name: "launch.png",
      mimeType: "image/png",
      buffer: Buffer.from(makePng(800, 600)),
    });
    await page.getByText("uploaded").waitFor();
    for (const box of await page.locator(".targets input[type=checkbox]").all()) await box.check();
    // The live count follows each platform's rule: Bluesky counts the emoji as one character of 300.
    await expect(page.locator("li.target").first().locator(".count").textContent()).resolves.toContain("/ 300");
    const when = new Date();
    when.setDate(when.getDate() + 2);
    when.setHours(10, 30, 0, 0);
    const local = `${when.getFullYear()}-${String(when.getMonth() + 1).padStart(2, "0")}-${String(when.getDate()).padStart(2, "0")}T10:30`;
    await page.getByLabel(/Schedule for/).fill(local);
    await page
      .locator("li.target")
      .first()
      .getByText(/Customise for/)
      .click();
    await shot("compose");
    publish("compose.png");
    await page.getByRole("button", { name: "Schedule" }).click();
    await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/);
    postId = page.url().split("/").pop()!;
    const post = (await (await asKey(`/v1/posts/${postId}`)).json()).data;
    expect(post.status).toBe("scheduled");
    expect(post.targets).toHaveLength(3);
    expect(post.media).toHaveLength(1);
    // 10:30 in the browser's zone, stored in UTC.
    expect(new Date(post.publish_at).getTime()).toBe(when.getTime());
  });

  test("the calendar shows the post; dragging it to another day changes publish_at", async () => {
    await page.getByRole("link", { name: "Calendar" }).click();
    const event = page.locator(`a.event[data-post="${postId}"]`);
    await event.waitFor();
    const before = (await (await asKey(`/v1/posts/${postId}`)).json()).data.publish_at as string;
    const from = new Date(before);
    // The next day, or the previous one when the next is past the visible grid.
    let to = new Date(from.getFullYear(), from.getMonth(), from.getDate() + 1);
    if ((await page.locator(`[data-date="${localDay(to)}"]`).count()) === 0)
      to = new Date(from.getFullYear(), from.getMonth(), from.getDate() - 1);
    // An event stays inside its day: its middle, where a pointer picks it up, is not the next day's cell.
    const [eventBox, dayBox] = [
      await event.boundingBox(),
      await page.locator(`[data-date="${localDay(from)}"]`).boundingBox(),
    ];
    expect(eventBox!.x + eventBox!.width).toBeLessThanOrEqual(dayBox!.x + dayBox!.width);
    const target = page.locator(`[data-date="${localDay(to)}"]`);
    // Both ends in view first: Playwright scrolls the drop target into view after pressing the button, and
    // Chromium forgets a drag when the page scrolls under a pressed button (no dragstart ever fires).
    await target.scrollIntoViewIfNeeded();
    await event.dragTo(target);
    await page.locator(`[data-date="${localDay(to)}"] a.event[data-post="${postId}"]`).waitFor();
    const after = new Date((await (await asKey(`/v1/posts/${postId}`)).json()).data.publish_at);
    expect(localDay(after)).toBe(localDay(to));
    expect(after.getHours()).toBe(from.getHours());
    expect(after.getMinutes()).toBe(from.getMinutes());
    expect(await page.locator(`[data-date="${localDay(from)}"] a.event[data-post="${postId}"]`).count()).toBe(0);
    await shot("calendar");
    publish("calendar.png");
    await page.getByRole("button", { name: "Week" }).click();
    await shot("calendar-week");
    await page.getByRole("button", { name: "Month" }).click();
  });

  test("without a mouse: the event opens with Enter and the post page moves it to any date and time", async () => {
    const event = page.locator(`a.event[data-post="${postId}"]`);
    await event.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`/posts/${postId}$`));
    const from = new Date((await (await asKey(`/v1/posts/${postId}`)).json()).data.publish_at);
    const to = new Date(from.getFullYear(), from.getMonth(), from.getDate() + 3, 9, 15);
    const field = page.getByLabel(/Move to/);
    await field.focus();
    await field.fill(`${localDay(to)}T09:15`);
    const patched = page.waitForResponse(
      (r) => r.request().method() === "PATCH" && new URL(r.url()).pathname === `/v1/posts/${postId}`,
    );
    await page.keyboard.press("Enter");
    expect((await patched).status()).toBe(200);
    const after = (await (await asKey(`/v1/posts/${postId}`)).json()).data;
    expect(new Date(after.publish_at).getTime()).toBe(to.getTime());
    expect(after.status).toBe("scheduled");
    await shot("post-move");
  });

  test("publish now from the post page: published with a link per account", async () => {
    await page.goto(`${h.url}/posts/${postId}`);
    await page.getByRole("button", { name: "Publish now" }).click();
    // Two LinkedIn targets (the member and its company page), each with its link.
    await page.getByRole("link", { name: "View on linkedin" }).nth(1).waitFor({ timeout: 20_000 });
    await page.getByRole("link", { name: "View on bluesky" }).waitFor();
    const post = (await (await asKey(`/v1/posts/${postId}`)).json()).data;
    expect(post.status).toBe("published");
    for (const t of post.targets) expect(t.platform_post_url).toMatch(/^https?:\/\//);
    await shot("post-detail");
    await page.getByRole("link", { name: "Posts" }).click();
    await page.locator("table.list tbody tr").first().waitFor();
    await shot("posts");
  });

  test("an error the API finds in one target is shown beside that target", async () => {
    await page.getByRole("link", { name: "Compose" }).click();
    await page.getByLabel("Text", { exact: true }).fill("word ".repeat(70));
    const bluesky = page.locator("li.target", { hasText: "Bluesky" });
    const linkedin = page.locator("li.target", { hasText: "LinkedIn" }).first();
    await bluesky.locator("input[type=checkbox]").check();
    await linkedin.locator("input[type=checkbox]").check();
    // Checked live through POST /v1/posts/validate, before anything is sent: the problem sits beside the
    // target it concerns, and the other target, whose limit the text fits, shows none.
    const tooLong = bluesky.locator(".problem[data-code=content_too_long]");
    await tooLong.waitFor();
    expect(await tooLong.textContent()).toMatch(/300/);
    await expect(linkedin.locator(".problem").count()).resolves.toBe(0);
    await expect(page.locator(".problem").count()).resolves.toBe(1);
    // Counted as the server counts it (350 characters: trailing space included, as it will be sent).
    await expect(bluesky.locator(".count.over").textContent()).resolves.toContain("350 / 300");
    await expect(linkedin.locator(".count.over").count()).resolves.toBe(0);
    await shot("compose-validate");
    expect((await (await asKey("/v1/posts")).json()).data).toHaveLength(1);
    // Publishing stays possible; the server still refuses, and its answer lands beside the same target.
    expect(await page.getByRole("button", { name: "Publish now" }).isEnabled()).toBe(true);
    await page.getByRole("button", { name: "Publish now" }).click();
    const error = bluesky.locator(".note.error");
    await error.waitFor();
    expect(await error.textContent()).toMatch(/300|too long|limit/i);
    // The refused create says what the live check said: once, not twice.
    await expect(tooLong.count()).resolves.toBe(0);
    await shot("compose-error");
    expect((await (await asKey("/v1/posts")).json()).data).toHaveLength(1);
  });

  test("drafts: save from compose, list, open and edit", async () => {
    await page.getByLabel("Text", { exact: true }).fill("An idea for next week");
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.waitForURL(/\/drafts\/[0-9a-f-]{36}$/);
    await page.getByLabel("Text", { exact: true }).fill("An idea for next week, refined");
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByText(/Draft saved/).waitFor();
    await page.getByRole("link", { name: "Drafts" }).click();
    await page.getByRole("link", { name: "An idea for next week, refined" }).waitFor();
    await shot("drafts");
  });

  test("a session call without the CSRF token, or from another site, is refused", async () => {
    const noToken = await page.evaluate(async () => {
      const res = await fetch("/v1/posts", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "x", targets: [] }),
      });
      return { status: res.status, body: await res.json() };
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.error.code).toBe("csrf_refused");
    // The cookie and the right token, but sent by another site's page: Origin gives it away.
    const cookie = (await browser.cookies()).find((c) => c.name === "crier_session")!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe("Lax");
    const session = await (
      await fetch(`${h.url}/auth/session`, { headers: { cookie: `crier_session=${cookie.value}` } })
    ).json();
    const foreign = await fetch(`${h.url}/v1/accounts`, {
      headers: {
        cookie: `crier_session=${cookie.value}`,
        "x-csrf-token": session.data.csrf_token,
        origin: "https://evil.example",
      },
    });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error.code).toBe("csrf_refused");
    expect((await (await asKey("/v1/posts")).json()).data).toHaveLength(1);
  });

  test("a post created with lenient handling shows on its page what was adjusted for each platform", async () => {
    const accounts = (await (await asKey("/v1/accounts")).json()).data as { id: string; platform: string }[];
    const bluesky = accounts.find((a) => a.platform === "bluesky")!;
    const res = await asKey("/v1/posts", {
      method: "POST",
      headers: { "content-type": "application/json", prefer: "handling=lenient" },
      body: JSON.stringify({
        content: "A long announcement: " + "word ".repeat(80),
        publish_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        targets: [{ account_id: bluesky.id }],
      }),
    });
    expect(res.status).toBe(201);
    const id = (await res.json()).data.id;
    await page.goto(`${h.url}/posts/${id}`);
    const note = page.locator(".note.adjusted");
    await note.waitFor();
    expect(await note.textContent()).toMatch(/Adjusted to fit bluesky.*cut from \d+ to \d+ graphemes/);
    await shot("post-adjusted");
    expect((await asKey(`/v1/posts/${id}`, { method: "DELETE" })).status).toBe(200);
  });

  test("a scheduled video without a cover is previewed with the poster frame Crier made of it", async () => {
    // The dashboard's own key may only post: the upload goes through a key that may write media.
    const { token: mediaKey } = await createKey(h.db, { name: "media", profileId: acmeId, scopes: [...SCOPES] });
    const asMedia = (path: string, init: RequestInit = {}) =>
      fetch(`${h.url}${path}`, { ...init, headers: { authorization: `Bearer ${mediaKey}`, ...init.headers } });
    const ticket = (
      await (
        await asMedia("/v1/media/uploads", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ filename: "clip.mp4", content_type: "video/mp4" }),
        })
      ).json()
    ).data;
    await fetch(ticket.upload.signedUrl, {
      method: "PUT",
      headers: { "content-type": "video/mp4" },
      body: makeVideo({ width: 640, height: 360, seconds: 2 }),
    });
    const media = await until("the video's poster frame", async () => {
      const got = (await (await asMedia(`/v1/media/${ticket.media_id}`)).json()).data;
      return got?.poster_url ? (got as { public_url: string; poster_url: string }) : undefined;
    });
    const accounts = (await (await asKey("/v1/accounts")).json()).data as { id: string; platform: string }[];
    const res = await asKey("/v1/posts", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        content: "A clip",
        media: [{ url: media.public_url, type: "video" }],
        publish_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        targets: [{ account_id: accounts.find((a) => a.platform === "bluesky")!.id }],
      }),
    });
    expect(res.status).toBe(201);
    const id = (await res.json()).data.id;
    await page.goto(`${h.url}/posts/${id}`);
    const video = page.locator(".media-item video");
    await video.waitFor();
    const poster = await until(
      "the video's poster attribute",
      async () => (await video.getAttribute("poster")) ?? undefined,
      10,
    );
    expect(poster).toBe(media.poster_url);
    await shot("post-video-poster");
    expect((await asKey(`/v1/posts/${id}`, { method: "DELETE" })).status).toBe(200);
  });

  test("sign-in is rate-limited after repeated wrong passwords", async () => {
    // Signed out, on a phone-sized window.
    await browser.clearCookies();
    const p = await browser.newPage();
    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(`${h.url}/sign-in`);
    await shot("sign-in-phone", p);
    for (let i = 0; i < MAX_FAILURES_PER_USER; i++) {
      await p.getByLabel("Email").fill("ada@example.com");
      await p.getByLabel("Password").fill(`wrong-${i}`);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.getByText("The email or password is wrong.").waitFor();
    }
    // Even the right password is refused now, until the window passes.
    await p.getByLabel("Password").fill(PASSWORD);
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.getByText("Too many sign-in attempts.").waitFor();
    await shot("sign-in-rate-limited", p);
    await p.close();
  });
});
