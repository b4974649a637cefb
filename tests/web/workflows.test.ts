/**
 * The workflows pages in Chromium over a sandbox profile: a workflow made with the form (an error shown
 * beside the setting it names, then fixed), the source's posts taken by "Check now" and copied by the
 * engine, the log of what was copied, queued and skipped, on/off and an edit. Read back through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, profiles } from "../../src/db/schema.ts";
import type { Engine } from "../../src/engine/scheduler.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { createKey } from "../../src/modules/keys/service.ts";
import { createMediaAccess } from "../../src/platform/host/media-guard.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import {
  accessibilityProblems,
  haveChromium,
  signedInDashboard,
  type SignedInDashboard,
} from "../support/browser-kit.ts";
import { followAuthorization, submitHostedForm } from "../support/connect-kit.ts";

describe.skipIf(!haveChromium)("workflows in the dashboard", () => {
  let d: SignedInDashboard;
  let token = "";
  const ids = { src: "", tg: "", th: "" };
  let workflowId = "";
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${d.h.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** Connects an account through its real connect flow (the sandbox's hosted form or OAuth emulator). */
  const connect = async (platform: string, values: Record<string, string> = {}) => {
    const res = await api("POST", `/v1/accounts/connect/${platform}`);
    const page = res.body.data.hosted_url
      ? await submitHostedForm(res.body.data.hosted_url, values)
      : await followAuthorization(res.body.data.authorization_url);
    expect(page.status).toBe(200);
    const list = (await api("GET", "/v1/accounts")).body.data as { id: string; platform: string }[];
    return list.find((a) => a.platform === platform)!.id;
  };
  /** Posts on the source account's platform (its emulator) as the user would there. */
  const native = async (accountId: string, content: string) => {
    const [row] = await d.h.db.db.select().from(accounts).where(eq(accounts.id, accountId));
    const [p] = await d.h.db.db.select().from(profiles).where(eq(profiles.id, row.profileId));
    const media = createMediaAccess({ maxBytes: 1_000_000, allowAddress: () => false });
    const { plugin, context } = providerFor(d.h.ctx, row, { sandbox: p.sandbox, media });
    const out = await plugin.publish!(context, {
      content,
      media: [],
      options: {},
      idempotencyToken: crypto.randomUUID(),
    });
    expect(out.kind).toBe("published");
    d.h.clock.advance(1000);
  };
  const engine = () => d.h.ctx.dispatch as unknown as Engine;
  const destField = (account: string, path: string) =>
    d.page.locator(`[data-path="settings.destination_publish_settings.${account}.${path}"]`);

  beforeAll(async () => {
    d = await signedInDashboard();
    ({ token } = await createKey(d.h.db, { name: "test", profileId: d.profileId, scopes: [...SCOPES] }));
    ids.src = await connect("bluesky", { handle: "source.test" });
    ids.tg = await connect("telegram", { channel: "@wf_copies" });
    ids.th = await connect("threads");
  });
  afterAll(async () => {
    await d?.stop();
  });

  test("a workflow is created with the form; a refused setting is shown beside its field", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "Workflows" }).click();
    await page.getByRole("heading", { name: "Workflows", level: 1 }).waitFor();
    await page.getByRole("button", { name: "New workflow" }).click();
    await page.getByLabel("Name").fill("Bluesky to the others");
    await page.getByLabel("Copy what this account publishes").selectOption(ids.src);
    await page.getByLabel("@wf_copies (telegram)").check();
    await page.getByRole("checkbox", { name: /\(threads\)/ }).check();
    // Filters: never copy posts tagged #private.
    await page.getByText("Filters and platform settings").click();
    await page.locator("#wf-settings-content_filters-hashtags-exclude").fill("private");
    // Telegram copies at least 30 minutes apart; Threads gets an ending before the caption.
    await page.getByText(/Settings for @wf_copies/).click();
    await page.locator(`#wf-dest-${ids.tg}-minimum_interval_minutes`).fill("30");
    await page.getByText(/Settings for .*\(threads\)/).click();
    await page.locator(`#wf-dest-${ids.th}-caption_ending`).fill("More on Bluesky");
    await page.locator(`#wf-dest-${ids.th}-caption_position`).selectOption("before");
    await page.locator(`#wf-dest-${ids.th}-remove_comment_dm_prompts`).check();
    await page.locator(`#wf-dest-${ids.th}-threads-caption_max_length`).fill("600");
    await page.getByRole("button", { name: "Create workflow" }).click();
    // The API refuses 600 (at most 500): its message sits beside that field, nothing is created.
    const beside = destField(ids.th, "threads.caption_max_length").locator(".note.error");
    await beside.waitFor();
    expect(await beside.textContent()).toContain("Must be from 1 to 500 (got 600)");
    expect(await page.locator(`#wf-dest-${ids.th}-threads-caption_max_length`).getAttribute("aria-invalid")).toBe(
      "true",
    );
    expect((await api("GET", "/v1/workflows")).body.data).toEqual([]);
    await d.shot("workflow-create-error");

    await page.locator(`#wf-dest-${ids.th}-threads-caption_max_length`).fill("280");
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.waitForURL(/\/workflows\/[0-9a-f-]{36}$/);
    workflowId = page.url().split("/").pop()!;
    const w = (await api("GET", `/v1/workflows/${workflowId}`)).body.data;
    expect(w).toMatchObject({
      name: "Bluesky to the others",
      source_account_id: ids.src,
      target_account_ids: [ids.tg, ids.th],
      is_active: true,
    });
    expect(w.settings.content_filters.hashtags.exclude).toEqual(["private"]);
    expect(w.settings.destination_publish_settings[ids.tg].minimum_interval_minutes).toBe(30);
    expect(w.settings.destination_publish_settings[ids.th]).toMatchObject({
      caption_ending: "More on Bluesky",
      caption_position: "before",
      remove_comment_dm_prompts: true,
      threads: { caption_max_length: 280 },
    });
  });

  test("check now takes the source's new posts; the log shows what was copied, queued and skipped", async () => {
    const { page } = d;
    d.h.clock.advance(1000);
    await native(ids.src, "Launch day w1 is here. DM me for details.");
    await native(ids.src, "Second w1 post, right after");
    await native(ids.src, "Staff only w1 #private");
    await page.getByRole("button", { name: "Check now" }).click();
    await page.getByText(/3 new source posts found, 3 taken/).waitFor();
    await engine().runUntilIdle();
    await page.reload();
    const log = page.getByRole("list", { name: "Source posts taken" });
    await log.waitFor();
    const items = (await api("GET", `/v1/workflows/${workflowId}/items`)).body.data as any[];
    expect(items).toHaveLength(3);
    const states = items.flatMap((i) => i.destinations.map((x: any) => `${x.platform}:${x.status}`)).sort();
    expect(states).toEqual(
      [
        "telegram:posted",
        "telegram:queued",
        "telegram:skipped",
        "threads:posted",
        "threads:posted",
        "threads:skipped",
      ].sort(),
    );
    // Copied: the Threads caption with its ending before it and the DM prompt removed.
    const copied = page.locator(".destination-state[data-status=posted]");
    expect(await copied.count()).toBe(3);
    expect(await log.textContent()).toContain("More on Bluesky\n\nLaunch day w1 is here.");
    // Queued: Telegram's second copy waits 30 minutes, and the page says until when.
    const queued = items.flatMap((i) => i.destinations).find((x: any) => x.status === "queued");
    const slot = new Date(queued.slot_at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    expect(await page.locator(".destination-state[data-status=queued]").textContent()).toContain(`Queued for ${slot}`);
    // Skipped: the rule and why.
    const skipped = page.locator(".destination-state[data-status=skipped]").first();
    expect(await skipped.textContent()).toContain("filter_hashtag_exclude");
    expect(await skipped.textContent()).toContain("#private");
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("workflow-edit");
  });

  test("turning it off and on, and editing a setting", async () => {
    const { page } = d;
    await page.getByRole("button", { name: "Turn off" }).click();
    await page.getByRole("button", { name: "Turn on" }).waitFor();
    expect((await api("GET", `/v1/workflows/${workflowId}`)).body.data.is_active).toBe(false);
    // Off removes the queued copy.
    const items = (await api("GET", `/v1/workflows/${workflowId}/items`)).body.data as any[];
    expect(items.flatMap((i) => i.destinations).filter((x: any) => x.status === "queued")).toEqual([]);
    expect(await page.getByRole("button", { name: "Check now" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Turn on" }).click();
    await page.getByRole("button", { name: "Turn off" }).waitFor();
    expect((await api("GET", `/v1/workflows/${workflowId}`)).body.data.is_active).toBe(true);

    await page.getByLabel("Name").fill("Bluesky everywhere");
    await page.locator(`#wf-dest-${ids.th}-caption_ending`).fill("Also on Bluesky");
    await page.getByRole("button", { name: "Save workflow" }).click();
    await page.getByText("Saved.").waitFor();
    const w = (await api("GET", `/v1/workflows/${workflowId}`)).body.data;
    expect(w.name).toBe("Bluesky everywhere");
    expect(w.settings.destination_publish_settings[ids.th].caption_ending).toBe("Also on Bluesky");
    expect(w.settings.destination_publish_settings[ids.tg].minimum_interval_minutes).toBe(30);
  });

  test("the list, and both pages at 375 px, pass the accessibility check", async () => {
    const { page } = d;
    await page.getByRole("link", { name: "All workflows" }).click();
    await page.getByRole("link", { name: "Bluesky everywhere" }).waitFor();
    expect(await page.locator(".workflow-row .badge").textContent()).toBe("on");
    expect(await accessibilityProblems(page)).toEqual([]);
    await d.shot("workflows");

    const p = await d.browser.newPage();
    await p.setViewportSize({ width: 375, height: 812 });
    for (const [path, heading, shot] of [
      ["/workflows", "Workflows", "workflows-phone"],
      [`/workflows/${workflowId}`, "Bluesky everywhere", "workflow-edit-phone"],
    ] as const) {
      await p.goto(`${d.h.url}${path}`);
      await p.getByRole("heading", { name: heading, level: 1 }).waitFor();
      await p.locator(".workflow-row, .workflow-items").first().waitFor();
      const wide = await p.evaluate(() =>
        [...document.querySelectorAll("body *")]
          .filter((e) => e.getBoundingClientRect().right > 376)
          .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)
          .slice(0, 8),
      );
      expect({ path, wide }).toEqual({ path, wide: [] });
      expect(await accessibilityProblems(p)).toEqual([]);
      await d.shot(shot, p);
    }
    await p.close();
  });

  test("platform blocks: Reddit's subreddit is required beside its block; Instagram's options are saved", async () => {
    const { page } = d;
    const rd = await connect("reddit");
    const ig = await connect("instagram");
    await page.goto(`${d.h.url}/workflows`);
    await page.getByRole("button", { name: "New workflow" }).click();
    await page.getByLabel("Name").fill("To Reddit and Instagram");
    await page.getByLabel("Copy what this account publishes").selectOption(ids.src);
    await page.getByRole("checkbox", { name: /\(reddit\)/ }).check();
    await page.getByRole("checkbox", { name: /\(instagram\)/ }).check();
    await page.getByText(/Settings for .*\(instagram\)/).click();
    // Each destination shows its own platform's block and no other.
    expect(await destField(ig, "instagram").count()).toBe(1);
    expect(await destField(ig, "reddit").count()).toBe(0);
    await page.locator(`#wf-dest-${ig}-instagram-remove_mentions`).check();
    await page.getByRole("button", { name: "Create workflow" }).click();
    const beside = destField(rd, "reddit").locator(".note.error");
    await beside.waitFor();
    expect(await beside.textContent()).toContain("subreddit");
    await page.locator(`#wf-dest-${rd}-reddit-subreddit`).fill("crier_test");
    await page.locator(`#wf-dest-${rd}-reddit-post_type`).selectOption("self");
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.waitForURL(/\/workflows\/[0-9a-f-]{36}$/);
    const w = (await api("GET", `/v1/workflows/${page.url().split("/").pop()}`)).body.data;
    expect(w.settings.destination_publish_settings[rd].reddit).toMatchObject({
      subreddit: "crier_test",
      post_type: "self",
    });
    expect(w.settings.destination_publish_settings[ig].instagram).toEqual({
      publish_as_trial_reel: false,
      remove_mentions: true,
    });
    // Instagram is a caption platform, Reddit is not: only Instagram offers a caption ending.
    await destField(ig, "caption_ending").waitFor();
    expect(await destField(rd, "caption_ending").count()).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);
  });
});
