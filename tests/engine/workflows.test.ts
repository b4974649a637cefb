/**
 * Workflows end to end on a sandbox profile: a Bluesky source, Telegram, Threads and X destinations,
 * accounts connected through the real connect flows, every platform call going to the emulators, the
 * engine driven by the TestClock. Copies are counted on the emulators.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { workflowHarness, type WorkflowHarness } from "../support/workflow-kit.ts";

let h: WorkflowHarness;
let src: string;
let tg: string;
let th: string;
let x: string;

beforeAll(async () => {
  h = await workflowHarness();
  src = await h.connect("bluesky", { handle: "source.test" });
  tg = await h.connect("telegram", { channel: "@wf_copies" });
  th = await h.connect("threads");
  x = await h.connect("twitter");
});
afterAll(() => h.stop());
// Each test's workflows stop with it, so a failing test does not copy into the next one.
afterEach(async () => {
  for (const w of (await h.request("GET", "/v1/workflows?limit=100", { token: h.token })).body.data) {
    if (w.is_active) await h.request("PATCH", `/v1/workflows/${w.id}`, { token: h.token, body: { is_active: false } });
  }
});

const MIN = 60_000;
const tick = () => h.clock.advance(1000);

async function workflow(body: Record<string, unknown>) {
  const res = await h.request("POST", "/v1/workflows", {
    token: h.token,
    body: { name: "copy", source_account_id: src, target_account_ids: [tg, th, x], is_active: true, ...body },
  });
  expect(res.status).toBe(201);
  tick();
  return res.body.data as { id: string };
}
const items = async (id: string) =>
  (await h.request("GET", `/v1/workflows/${id}/items`, { token: h.token })).body.data as any[];
const read = async (id: string) => (await h.request("GET", `/v1/workflows/${id}`, { token: h.token })).body.data;
const off = (id: string) => h.request("PATCH", `/v1/workflows/${id}`, { token: h.token, body: { is_active: false } });
/** Lets the next scheduled poll fall due. */
const nextPoll = () => h.clock.advance(h.ctx.config.workflowPollIntervalSeconds * 1000 + 1000);

describe("copying", () => {
  test("a new source post is copied once to each destination, each with its caption rules; history is not copied", async () => {
    await h.native(src, "old news c1 from before the workflow");
    tick();
    const wf = await workflow({
      settings: {
        destination_publish_settings: {
          [th]: {
            caption_ending: "More on Bluesky",
            caption_position: "before",
            remove_comment_dm_prompts: true,
            threads: { caption_max_length: 60 },
          },
          [x]: { caption_ending: "#crossposted", remove_comment_dm_prompts: true },
        },
      },
    });
    await h.native(
      src,
      "Launch day c1 for the new release notes. Comment YES below to get the link! DM me for details.",
    );
    tick();
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "c1")).toEqual([
      "Launch day c1 for the new release notes. Comment YES below to get the link! DM me for details.",
    ]);
    expect(h.postsWith("threads", "c1")).toEqual(["More on Bluesky\n\nLaunch day c1 for the new release notes."]);
    expect(h.postsWith("twitter", "c1")).toEqual(["Launch day c1 for the new release notes.\n\n#crossposted"]);

    // Polling again (scheduled and on demand) takes nothing twice.
    nextPoll();
    await h.engine.runUntilIdle();
    const check = await h.request("POST", `/v1/workflows/${wf.id}/check`, { token: h.token });
    expect(check.status).toBe(200);
    expect(check.body.data.items).toEqual([]);
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "c1")).toHaveLength(1);
    expect(h.postsWith("threads", "c1")).toHaveLength(1);
    expect(h.postsWith("twitter", "c1")).toHaveLength(1);

    const [item] = await items(wf.id);
    expect(item.destinations.map((d: any) => [d.platform, d.status])).toEqual([
      ["telegram", "posted"],
      ["threads", "posted"],
      ["twitter", "posted"],
    ]);
    const post = (await h.request("GET", `/v1/posts/${item.destinations[0].post_id}`, { token: h.token })).body.data;
    expect(post).toMatchObject({ origin: "workflow", status: "published" });
    expect(post.targets).toHaveLength(1);
    expect((await read(wf.id)).last_checked).not.toBeNull();
    await off(wf.id);
  });

  test("the items route lists the source posts taken most recently first", async () => {
    const wf = await workflow({ target_account_ids: [tg] });
    await h.native(src, "order one");
    tick();
    await h.engine.runUntilIdle();
    nextPoll();
    await h.native(src, "order two");
    tick();
    await h.engine.runUntilIdle();
    const list = await items(wf.id);
    expect(list.map((i) => i.destinations[0].caption)).toEqual(["order two", "order one"]);
    expect(list[0].created_at > list[1].created_at).toBe(true);
    await off(wf.id);
  });

  test("filters skip what they should and the items route says why", async () => {
    const wf = await workflow({
      target_account_ids: [tg],
      settings: { content_filters: { types: { text: true }, hashtags: { include: ["#News"], exclude: ["private"] } } },
    });
    await h.native(src, "f2 no tag at all");
    tick();
    await h.native(src, "f2 tagged #news for everyone");
    tick();
    await h.native(src, "f2 tagged #NEWS but #Private");
    tick();
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "f2")).toEqual(["f2 tagged #news for everyone"]);
    const list = await items(wf.id);
    const byText = (p: string) =>
      list.find((i) => i.destinations[0].caption?.includes(p) || i.destinations[0].reason?.length)!;
    const reasons = list.map((i) => [i.destinations[0].status, i.destinations[0].reason_code]).sort();
    expect(reasons).toEqual(
      [
        ["posted", null],
        ["skipped", "filter_hashtag_exclude"],
        ["skipped", "filter_hashtag_include"],
      ].sort() as any,
    );
    expect(byText("f2").destinations[0].reason ?? "").toBeString();
    expect(
      list.find((i) => i.destinations[0].reason_code === "filter_hashtag_exclude").destinations[0].reason,
    ).toContain("#private");
    await off(wf.id);

    const textOff = await workflow({
      target_account_ids: [tg],
      settings: { content_filters: { types: { text: false } } },
    });
    await h.native(src, "f3 plain text");
    tick();
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "f3")).toEqual([]);
    const [skipped] = await items(textOff.id);
    expect(skipped.destinations[0]).toMatchObject({ status: "skipped", reason_code: "filter_type" });
    expect(skipped.destinations[0].reason).toContain("content_filters.types.text");
    await off(textOff.id);
  });

  test("minimum_interval_minutes spaces copies per destination", async () => {
    const wf = await workflow({
      target_account_ids: [tg, x],
      settings: { destination_publish_settings: { [tg]: { minimum_interval_minutes: 30 } } },
    });
    const start = h.clock.now().getTime();
    for (const n of [1, 2, 3]) {
      await h.native(src, `s4 number ${n}`);
      tick();
    }
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "s4")).toEqual(["s4 number 1"]);
    expect(h.postsWith("twitter", "s4")).toHaveLength(3);
    const slots = (await items(wf.id))
      .map((i) => i.destinations.find((d: any) => d.account_id === tg))
      .map((d: any) => new Date(d.slot_at).getTime())
      .sort();
    expect(slots[1] - slots[0]).toBe(30 * MIN);
    expect(slots[2] - slots[1]).toBe(30 * MIN);
    h.clock.set(new Date(slots[1] - 1000));
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "s4")).toHaveLength(1);
    h.clock.set(new Date(slots[1]));
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "s4")).toEqual(["s4 number 1", "s4 number 2"]);
    // Turning the workflow off removes the queued third copy; nothing more goes out.
    expect((await off(wf.id)).status).toBe(200);
    h.clock.set(new Date(Math.max(slots[2], start) + MIN));
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "s4")).toHaveLength(2);
    expect((await items(wf.id)).flatMap((i) => i.destinations).filter((d: any) => d.status === "queued")).toEqual([]);
  });

  test("a source read failing with 5xx loses nothing: the next poll catches up", async () => {
    const wf = await workflow({ target_account_ids: [tg] });
    await h.native(src, "r5 first");
    tick();
    h.emulator("bluesky").failNext({ kind: "server_error", on: "getAuthorFeed" });
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "r5")).toEqual([]);
    expect((await read(wf.id)).last_error).toContain("Reading the source failed");
    await h.native(src, "r5 second");
    nextPoll();
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "r5").sort()).toEqual(["r5 first", "r5 second"]);
    expect((await read(wf.id)).last_error).toBeNull();
    await off(wf.id);
  });

  test("a source whose authorization is refused becomes auth_required", async () => {
    const other = await h.connect("bluesky", { handle: "refused.test" });
    const res = await h.request("POST", "/v1/workflows", {
      token: h.token,
      body: { name: "auth", source_account_id: other, target_account_ids: [tg], is_active: true },
    });
    tick();
    const bsky = h.emulator("bluesky");
    bsky.failNext({ kind: "auth_expired", on: "getAuthorFeed" });
    bsky.failNext({ kind: "auth_expired", on: "refreshSession" });
    await h.engine.runUntilIdle();
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, other));
    expect(row.status).toBe("auth_required");
    expect((await read(res.body.data.id)).last_error).toContain("reconnected");
    await off(res.body.data.id);
  });

  test("two workflows pointing at each other do not loop", async () => {
    const b = await h.connect("bluesky", { handle: "mirror.test" });
    const ab = await workflow({ target_account_ids: [b] });
    const ba = (
      await h.request("POST", "/v1/workflows", {
        token: h.token,
        body: { name: "back", source_account_id: b, target_account_ids: [src], is_active: true },
      })
    ).body.data;
    tick();
    await h.native(src, "loop l6 once");
    tick();
    for (let i = 0; i < 3; i++) {
      await h.engine.runUntilIdle();
      nextPoll();
    }
    await h.engine.runUntilIdle();
    expect(h.postsWith("bluesky", "l6")).toHaveLength(2);
    const back = await items(ba.id);
    expect(back.map((i) => i.destinations[0].reason_code)).toEqual(["workflow_output"]);
    await off(ab.id);
    await off(ba.id);
  });

  test("restart mid-poll: a poll that died holds its lease until it expires, then the item is copied exactly once", async () => {
    const wf = await workflow({ target_account_ids: [tg] });
    await h.native(src, "m7 after a crash");
    tick();
    // A copy claimed the poll and died before finishing.
    await h.db.db.execute(
      sql`update workflows set lease_until = ${new Date(h.clock.now().getTime() + 10 * MIN).toISOString()}::timestamptz, claimed_by = 'dead-copy' where id = ${wf.id}::uuid`,
    );
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "m7")).toEqual([]);
    expect((await h.request("POST", `/v1/workflows/${wf.id}/check`, { token: h.token })).body.error.code).toBe(
      "workflow_check_in_progress",
    );
    h.clock.advance(10 * MIN + 1000);
    await Promise.all([h.engine.runUntilIdle(), h.request("POST", `/v1/workflows/${wf.id}/check`, { token: h.token })]);
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "m7")).toEqual(["m7 after a crash"]);
    await off(wf.id);
  });

  test("deleting a workflow removes its queued items; posts it created stay", async () => {
    const wf = await workflow({
      target_account_ids: [tg],
      settings: { destination_publish_settings: { [tg]: { minimum_interval_minutes: 60 } } },
    });
    await h.native(src, "d8 one");
    tick();
    await h.native(src, "d8 two");
    tick();
    await h.engine.runUntilIdle();
    const posted = (await items(wf.id)).flatMap((i) => i.destinations).find((d: any) => d.status === "posted");
    const del = await h.request("DELETE", `/v1/workflows/${wf.id}`, { token: h.token });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ deleted: true, id: wf.id });
    const left = await h.db.rows<{ n: number }>(
      sql`select count(*)::int as n from workflow_items where workflow_id = ${wf.id}::uuid`,
    );
    expect(left[0].n).toBe(0);
    expect((await h.request("GET", `/v1/posts/${posted.post_id}`, { token: h.token })).status).toBe(200);
    h.clock.advance(2 * 60 * MIN);
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "d8")).toEqual(["d8 one"]);
  });
});

describe("AI adapt", () => {
  let ai: ReturnType<typeof Bun.serve>;
  let mode: "ok" | "error" | "hang" = "ok";
  let seen: any[] = [];
  let aiH: WorkflowHarness;
  let a: { src: string; th: string };

  beforeAll(async () => {
    ai = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 0,
      async fetch(req) {
        const body = await req.json();
        seen.push({ auth: req.headers.get("authorization"), path: new URL(req.url).pathname, body });
        if (mode === "error") return Response.json({ error: { message: "overloaded" } }, { status: 503 });
        if (mode === "hang") await Bun.sleep(3000);
        const text = body.messages[1].content as string;
        return Response.json({
          choices: [
            {
              message: {
                role: "assistant",
                content: `Adapted: ${text.toUpperCase().replace(/HTTPS:\/\/EXAMPLE.COM\/X/g, "https://example.com/x")}`,
              },
            },
          ],
        });
      },
    });
    aiH = await workflowHarness({
      ai: { baseUrl: `http://127.0.0.1:${ai.port}/v1`, apiKey: "sk-test", model: "tiny", timeoutMs: 500 },
    });
    a = { src: await aiH.connect("bluesky", { handle: "ai-source.test" }), th: await aiH.connect("threads") };
    aiH.clock.advance(1000);
    const res = await aiH.request("POST", "/v1/workflows", {
      token: aiH.token,
      body: {
        name: "ai",
        source_account_id: a.src,
        target_account_ids: [a.th],
        is_active: true,
        settings: {
          destination_publish_settings: { [a.th]: { adapt_caption: true, adapt_caption_instructions: "Shout it." } },
        },
      },
    });
    expect(res.status).toBe(201);
    aiH.clock.advance(1000);
  });
  afterAll(async () => {
    await aiH.stop();
    ai.stop(true);
  });

  const copy = async (text: string) => {
    await aiH.native(a.src, text);
    aiH.clock.advance(1000);
    await aiH.engine.runUntilIdle();
    aiH.clock.advance(aiH.ctx.config.workflowPollIntervalSeconds * 1000 + 1000);
  };

  test("success: the destination gets the rewrite, links kept; the endpoint got the instructions and the key", async () => {
    mode = "ok";
    await copy("ai1 see https://example.com/x");
    expect(aiH.postsWith("threads", "AI1")).toEqual(["Adapted: AI1 SEE https://example.com/x"]);
    expect(seen.at(-1)).toMatchObject({
      auth: "Bearer sk-test",
      path: "/v1/chat/completions",
      body: { model: "tiny" },
    });
    expect(seen.at(-1).body.messages[0].content).toContain("Shout it.");
  });

  test("an error from the endpoint publishes the original caption", async () => {
    mode = "error";
    await copy("ai2 original words");
    expect(aiH.postsWith("threads", "ai2")).toEqual(["ai2 original words"]);
  });

  test("a timeout publishes the original caption", async () => {
    mode = "hang";
    await copy("ai3 slow model");
    expect(aiH.postsWith("threads", "ai3")).toEqual(["ai3 slow model"]);
  });
});
