/**
 * A signed-in dashboard in Debian's Chromium (playwright-core) over a listening Crier with a sandbox
 * profile and a running engine: what the browser suites share.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { adminCommands } from "../../src/cli/commands.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { createProfile } from "../../src/modules/keys/service.ts";
import { listeningHarness, type ListeningHarness } from "./connect-kit.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);
const OUT = join(resolve(import.meta.dir, "../.."), "tests/output/dashboard");

export interface SignedInDashboard {
  h: ListeningHarness;
  browser: BrowserContext;
  page: Page;
  profileId: string;
  /** A full-page screenshot into tests/output/dashboard/<name>.png. */
  shot(name: string, p?: Page): Promise<void>;
  stop(): Promise<void>;
}

export async function signedInDashboard(email = "grace@example.com"): Promise<SignedInDashboard> {
  const h = await listeningHarness();
  h.ctx.dispatch = createEngine(h.ctx, { random: () => 0.5 });
  const profile = await createProfile(h.db, "Acme", true);
  const { link } = await adminCommands["users.create"](h.ctx, { email, profileId: profile.id });
  const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "crier-chromium-")), {
    executablePath: CHROMIUM,
    viewport: { width: 1280, height: 860 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(link);
  await page.getByLabel("New password").fill("correct horse battery staple");
  await page.getByLabel("Repeat it").fill("correct horse battery staple");
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.getByRole("heading", { name: "Accounts", level: 1 }).waitFor();
  return {
    h,
    browser,
    page,
    profileId: profile.id,
    async shot(name, p = page) {
      mkdirSync(OUT, { recursive: true });
      await p.evaluate(() => window.scrollTo(0, 0));
      await p.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
    },
    async stop() {
      await browser.close();
      await h.stop();
    },
  };
}

/** Connects the sandbox Bluesky account through its hosted form, as a user does from the accounts page. */
export async function connectBluesky(page: Page, handle = "acme.bsky.social") {
  await page.getByRole("button", { name: "Connect Bluesky" }).click();
  await page.waitForURL(/\/connect\/bluesky/);
  await page.getByLabel("Handle").fill(handle);
  await page.getByLabel("App password").fill("abcd-efgh-ijkl-mnop");
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("link", { name: "Back to the accounts in the dashboard" }).click();
  await page.locator("li.account").first().waitFor();
}

/** axe-core's rules, run in the page: the serious and critical violations, each with the elements at fault. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  const source = await Bun.file(join(resolve(import.meta.dir, "../.."), "node_modules/axe-core/axe.min.js")).text();
  // Evaluated through the browser's protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    // @ts-expect-error axe is the global axe-core's script defines
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return (result.violations as { id: string; impact: string; help: string; nodes: { target: string[] }[] }[]).map(
      (v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }),
    );
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.slice(0, 3).join(", ")})`);
}
