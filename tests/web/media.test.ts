/**
 * The media library in Chromium over a sandbox profile: uploads made through the API are listed on the
 * Media page with their thumbnails and facts, and compose's "Choose from library" adds one to a post,
 * which is then created carrying that file (read back through the API).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SCOPES } from "../../src/http/scopes.ts";
import { createKey } from "../../src/modules/keys/service.ts";
import {
  accessibilityProblems,
  connectBluesky,
  haveChromium,
  signedInDashboard,
  type SignedInDashboard,
} from "../support/browser-kit.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";
import { until } from "../support/until.ts";

describe.skipIf(!haveChromium)("the media library in the dashboard", () => {
  let d: SignedInDashboard;
  let token = "";
  const uploaded: Record<string, { id: string; public_url: string }> = {};
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${d.h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const nav = (name: string) => d.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name });
  const upload = async (filename: string, content_type: string, bytes: Uint8Array) => {
    const r = await api("POST", "/v1/media/base64", {
      filename,
      content_type,
      data: Buffer.from(bytes).toString("base64"),
    });
    expect(r.status).toBe(201);
    uploaded[filename] = r.body.data;
    // The harness's clock stands still: a second between uploads makes their order the upload order.
    d.h.clock.advance(1000);
  };

  beforeAll(async () => {
    d = await signedInDashboard();
    ({ token } = await createKey(d.h.db, { name: "test", profileId: d.profileId, scopes: [...SCOPES] }));
    await connectBluesky(d.page);
    await upload("harbour.jpg", "image/jpeg", await makeImage({ width: 1200, height: 800, format: "jpeg" }));
    await upload("teaser.mp4", "video/mp4", makeVideo({ width: 320, height: 180, seconds: 2 }));
    await upload("logo.png", "image/png", await makeImage({ width: 400, height: 400, format: "png" }));
  });
  afterAll(async () => {
    await d?.page.setViewportSize({ width: 1280, height: 860 });
    await d?.stop();
  });

  test("the Media page lists the uploads newest first with thumbnails and their facts", async () => {
    const { page } = d;
    await nav("Media").click();
    await page.getByRole("heading", { name: "Media", level: 1 }).waitFor();
    const cards = page.getByRole("list", { name: "Uploads" }).locator("li.media-card");
    await cards.nth(2).waitFor();
    expect(await cards.locator(".filename").allTextContents()).toEqual(["logo.png", "teaser.mp4", "harbour.jpg"]);
    const jpeg = cards.nth(2);
    expect(await jpeg.locator(".media-facts").textContent()).toContain("1200 × 800 px");
    expect(await jpeg.locator("img.thumb").getAttribute("src")).toBe(uploaded["harbour.jpg"].public_url);
    const video = await cards.nth(1).locator(".media-facts").textContent();
    expect(video).toContain("320 × 180 px");
    expect(video).toContain("Codec");
    expect(video).toContain("h264");
    expect(video).toMatch(/Duration\s*2\.0 s/);
    expect(await cards.nth(0).locator(".media-facts").textContent()).toMatch(/Size\s*\d+ (B|KB)/);
    // Narrowed to videos, then back to everything.
    await page.getByLabel("Show").selectOption("video");
    await until("only the video listed", async () =>
      (await cards.locator(".filename").allTextContents()).join() === "teaser.mp4" ? true : undefined,
    );
    await page.getByLabel("Show").selectOption("");
    await cards.nth(2).waitFor();
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("media");
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("media-phone");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  test("compose: Choose from library adds an uploaded file, and the post carries it", async () => {
    const { page } = d;
    await nav("Compose").click();
    await page.getByLabel("Text", { exact: true }).fill("Harbour at dawn");
    await page.getByRole("button", { name: "Choose from library" }).click();
    const dialog = page.getByRole("dialog", { name: "Choose from library" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: /^Add harbour\.jpg/ }).waitFor();
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("compose-library");
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 860 });
    // Keyboard only: the dialog's buttons are reached with Tab and pressed with Enter.
    await dialog.getByRole("button", { name: /^Add harbour\.jpg/ }).focus();
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "hidden" });
    const item = page.getByRole("list", { name: "Media" }).locator("li.media-item");
    await item.waitFor();
    expect(await item.count()).toBe(1);
    expect(await item.textContent()).toContain("uploaded");
    await d.shot("compose-library-added");
    await page.locator(".targets input[type=checkbox]").first().check();
    const due = new Date(Date.now() + 2 * 86_400_000);
    due.setHours(10, 0, 0, 0);
    const pad = (n: number) => String(n).padStart(2, "0");
    await page
      .getByLabel(/Schedule for/)
      .fill(`${due.getFullYear()}-${pad(due.getMonth() + 1)}-${pad(due.getDate())}T10:00`);
    await page.getByRole("button", { name: "Schedule", exact: true }).click();
    await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/);
    const post = (await api("GET", `/v1/posts/${page.url().split("/").pop()}`)).body.data;
    expect(post.status).toBe("scheduled");
    expect(post.media).toHaveLength(1);
    expect(post.media[0].url).toBe(uploaded["harbour.jpg"].public_url);
    expect(post.media[0].type).toBe("image");
    // Escape closes the picker without adding anything.
    await nav("Compose").click();
    await page.getByRole("button", { name: "Choose from library" }).click();
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect(await page.locator("li.media-item").count()).toBe(0);
  });
});
