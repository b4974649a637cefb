/**
 * The workflow.item_* events over the real workflow engine: a sandbox source account's native post is
 * copied to Telegram (queued, then posted) and skipped for Instagram (which needs media), each event sent
 * once to a receiver on 127.0.0.1 with the item as GET /v1/workflows/{id}/items shows it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.ts";
import { workflowHarness, type WorkflowHarness } from "../../support/workflow-kit.ts";

let h: WorkflowHarness;
let rx: Receiver;

beforeAll(async () => {
  h = await workflowHarness();
  h.ctx.config.webhookAllowPrivate = true;
  rx = startReceiver();
});
afterAll(async () => {
  await h.stop();
  await rx.stop();
});

test("a copied post fires workflow.item_queued and item_posted, a destination that cannot take it item_skipped", async () => {
  const src = await h.connect("bluesky", { handle: "hooks.source.test" });
  const tg = await h.connect("telegram", { channel: "@wf_hooks" });
  const ig = await h.connect("instagram");
  const events = ["workflow.item_queued", "workflow.item_posted", "workflow.item_skipped"];
  const hook = await h.request("POST", "/v1/webhooks", { token: h.token, body: { url: rx.url, events } });
  expect(hook.status).toBe(201);
  const wf = await h.request("POST", "/v1/workflows", {
    token: h.token,
    body: { name: "hooks", source_account_id: src, target_account_ids: [tg, ig], is_active: true },
  });
  expect(wf.status).toBe(201);
  h.clock.advance(1000);
  await h.native(src, "w1 words only");
  for (let i = 0; i < 4; i++) {
    h.clock.advance(1000);
    await h.engine.runUntilIdle();
  }

  const of = (type: string, account: string) =>
    rx.ofType(type).filter((r) => r.json.data.item.destinations[0].account_id === account);
  expect(of("workflow.item_queued", tg)).toHaveLength(1);
  expect(of("workflow.item_posted", tg)).toHaveLength(1);
  expect(of("workflow.item_skipped", ig)).toHaveLength(1);
  expect(of("workflow.item_posted", ig)).toHaveLength(0);
  expect(rx.received.map((r) => r.json.type)).toContain("workflow.item_skipped");

  const posted = of("workflow.item_posted", tg)[0].json.data;
  expect(posted.workflow_id).toBe(wf.body.data.id);
  const [item] = (await h.request("GET", `/v1/workflows/${wf.body.data.id}/items`, { token: h.token })).body.data;
  const shown = item.destinations.find((d: { account_id: string }) => d.account_id === tg);
  expect(posted.item.destinations[0]).toMatchObject({ status: "posted", post_id: shown.post_id });
  expect(posted.item.source_item_id).toBe(item.source_item_id);
  const skipped = of("workflow.item_skipped", ig)[0].json.data.item.destinations[0];
  expect(skipped.reason_code).toBeTruthy();
});
