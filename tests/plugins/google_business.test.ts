/**
 * Google Business Profile specifics beyond the conformance suite: one Crier account per location at
 * connect, each kind of local post (standard with a button, event, offer, a photo), the adapter's bodies
 * held to Google's contract, the option rules refused at creation, review (PROCESSING, LIVE, REJECTED),
 * and Google's errors as outcomes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import plugin from "../../plugins/google_business/index.ts";
import { localPostOf } from "../../plugins/google_business/post.ts";
import { LocalPost, BUSINESS_MANAGE } from "../../plugins/google_business/contract.ts";
import { createGoogleBusinessEmulator, type GoogleBusinessEmulator } from "../../plugins/google_business/emulator.ts";
import { ConnectError, type ConnectFlow, type Outcome, type PluginContext } from "../../src/platform/sdk.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { followAuthorization } from "../support/connect-kit.ts";
import { makeGif, makeJpeg } from "../support/media-fixtures.ts";
import { job, oauthRig, rig as plainRig, type OAuthRig } from "./support.ts";

let emulator: GoogleBusinessEmulator;
let rig: OAuthRig<GoogleBusinessEmulator>;
let ctx: PluginContext;
let groupShop: string;
let twinCafe: string;
/** The sandbox user's personal account, listed first as Google lists it. */
const PERSONAL = "accounts/106000000000000000001";

const JPEG = makeJpeg(300, 300, 0);
const GIF = makeGif(8, 8);

beforeAll(async () => {
  emulator = createGoogleBusinessEmulator();
  // A location group the user manages besides the personal account (which holds the sandbox bakery): a shop
  // of its own, a kiosk that cannot take posts, and a café reached through both accounts.
  const group = emulator.addAccount("Sandbox Group");
  groupShop = emulator.addLocation("Harbour Shop", { account: group });
  emulator.addLocation("Closed Kiosk", { account: group, canPost: false });
  twinCafe = emulator.addLocation("Twin Café", { account: PERSONAL, alsoIn: [group] });
  // Two branches of one chain, with one title.
  emulator.addLocation("Corner Deli", { account: group, street: "2 Elm St" });
  emulator.addLocation("Corner Deli", { account: group, street: "9 Oak Ave" });
  rig = await oauthRig(emulator, {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/token",
    media: (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/shop.jpg") return new Response(JPEG, { headers: { "content-type": "image/jpeg" } });
      if (path === "/anim.gif") return new Response(GIF, { headers: { "content-type": "image/gif" } });
      return new Response("gone", { status: 404 });
    },
    mediaMaxBytes: 1024 * 1024,
  });
  const bakery = rig.rows.find((r) => r.username === "Sandbox Bakery")!;
  ctx = rig.context(bakery);
});
afterAll(() => rig.stop());

async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await plugin.checkStatus!(ctx, out.handle);
  return out;
}
const publish = async (content: string, options: Record<string, unknown> = {}, photo?: string) =>
  settle(
    await plugin.publish!(
      ctx,
      job(content, { options, media: photo ? [{ url: `${rig.mediaUrl}/${photo}`, type: "image" }] : [] }),
    ),
  );
/** What the emulator received last, as Google's contract reads it: no errors. */
const contractErrors = (body: unknown) => [...Value.Errors(LocalPost, body)].map((e) => `${e.path} ${e.message}`);

describe("connect", () => {
  test("every location the user manages that can take posts becomes one account, each once", () => {
    expect(rig.connectPage.html).toContain("Google Business Profile accounts are connected");
    const names = rig.rows.map((r) => r.username).sort();
    // The closed kiosk cannot manage local posts: no destination.
    // Same-titled branches are told apart by their address.
    expect(names).toEqual([
      "Corner Deli (2 Elm St, Springfield)",
      "Corner Deli (9 Oak Ave, Springfield)",
      "Harbour Shop",
      "Sandbox Bakery",
      "Twin Café",
    ]);
    // The café is listed under both accounts and connected once, through the first.
    expect(rig.rows.find((r) => r.username === "Twin Café")!.remoteId).toBe(twinCafe);
    expect(twinCafe).toStartWith(`${PERSONAL}/locations/`);
    for (const row of rig.rows) expect(row.remoteId).toMatch(/^accounts\/\d+\/locations\/\d+$/);
    const shop = rig.rows.find((r) => r.username === "Harbour Shop")!;
    expect(shop.remoteId).toBe(groupShop);
    expect(shop.metadata).toMatchObject({
      account: groupShop.split("/locations/")[0],
      address: "1 Main St, Springfield",
    });
  });

  test("each location posts to its own v4 parent", async () => {
    const shop = rig.context(rig.rows.find((r) => r.username === "Harbour Shop")!);
    const out = await plugin.publish!(shop, job("From the harbour"));
    expect(out).toMatchObject({ kind: "submitted" });
    if (out.kind === "submitted") expect(out.handle).toStartWith(`${groupShop}/localPosts/`);
  });

  test("a consent without business.manage is refused with a message", async () => {
    emulator.grantOnly([]);
    try {
      const res = await rig.h.request("POST", "/v1/accounts/connect/google_business", { token: rig.token });
      const page = await followAuthorization(res.body.data.authorization_url);
      expect(page.html).toContain("Google did not grant managing your Business Profile");
    } finally {
      emulator.grantOnly(null);
    }
  });

  test("a Google account whose locations cannot post, or that has none, connects nothing", async () => {
    const other = createGoogleBusinessEmulator();
    const lone = plainRig(plugin, other);
    try {
      const flow = plugin.connect as Extract<ConnectFlow, { mode: "oauth_authorization_url" }>;
      const c = lone.connectContext({
        CLIENT_ID: "sandbox",
        CLIENT_SECRET: "sandbox",
        TOKEN_URL: `${lone.served.url}/oauth/token`,
      });
      // A sandbox code is taken without a consent page.
      const exchange = () =>
        flow.exchange(c, { code: "sandbox_x", redirectUri: "http://127.0.0.1/cb", codeVerifier: "v".repeat(43) });
      expect(await exchange()).toHaveLength(1);
      other.clearLocations();
      expect(exchange()).rejects.toThrow("manages no Business Profile location");
      other.addLocation("Closed", { canPost: false });
      const refused = await exchange().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConnectError);
      expect((refused as Error).message).toContain("can take posts");
    } finally {
      await lone.stop();
    }
  });
});

describe("local posts", () => {
  test("a standard update with a learn_more button", async () => {
    const options = { call_to_action: { action_type: "learn_more", url: "https://bakery.example/menu" } };
    const out = await publish("Fresh bread every morning", options);
    expect(out).toMatchObject({ kind: "published" });
    if (out.kind === "published") {
      expect(out.platformPostId).toStartWith(`${ctx.account.remoteId}/localPosts/`);
      expect(out.url).toStartWith("https://local.google.com/place?");
    }
    const sent = emulator.received().at(-1);
    expect(sent).toEqual({
      summary: "Fresh bread every morning",
      topicType: "STANDARD",
      callToAction: { actionType: "LEARN_MORE", url: "https://bakery.example/menu" },
    });
    expect(contractErrors(sent)).toEqual([]);
  });

  test("a call button carries no url", async () => {
    expect(await publish("Call us", { call_to_action: { action_type: "call" } })).toMatchObject({ kind: "published" });
    expect(emulator.received().at(-1)).toMatchObject({ callToAction: { actionType: "CALL" } });
    expect(emulator.received().at(-1)).not.toHaveProperty("callToAction.url");
  });

  test("an event: its title and a schedule with every field, date-only bounds spanning whole days", async () => {
    const options = { topic_type: "event", event: { title: "Tasting", start: "2026-12-24T18:30", end: "2026-12-26" } };
    expect(await publish("Come taste", options)).toMatchObject({ kind: "published" });
    const sent = emulator.received().at(-1);
    expect(sent).toMatchObject({
      topicType: "EVENT",
      event: {
        title: "Tasting",
        schedule: {
          startDate: { year: 2026, month: 12, day: 24 },
          startTime: { hours: 18, minutes: 30, seconds: 0, nanos: 0 },
          endDate: { year: 2026, month: 12, day: 26 },
          endTime: { hours: 23, minutes: 59, seconds: 59, nanos: 0 },
        },
      },
    });
    expect(contractErrors(sent)).toEqual([]);
  });

  test("an offer (topic inferred from offer): coupon, link and terms, with its title and period", async () => {
    const options = {
      event: { title: "10% off", start: "2026-12-01", end: "2026-12-31" },
      offer: { coupon_code: "BREAD10", redeem_online_url: "https://bakery.example/shop", terms: "One per visit" },
    };
    expect(await publish("December offer", options)).toMatchObject({ kind: "published" });
    const sent = emulator.received().at(-1);
    expect(sent).toMatchObject({
      topicType: "OFFER",
      offer: {
        couponCode: "BREAD10",
        redeemOnlineUrl: "https://bakery.example/shop",
        termsConditions: "One per visit",
      },
    });
    expect(contractErrors(sent)).toEqual([]);
    expect(emulator.posts().at(-1)!.options).toMatchObject({ topic_type: "OFFER" });
  });

  test("a photo goes as a sourceUrl Google fetches; the emulator read a JPEG from it", async () => {
    expect(await publish("Our shop", {}, "shop.jpg")).toMatchObject({ kind: "published" });
    expect(emulator.received().at(-1)).toMatchObject({
      media: [{ mediaFormat: "PHOTO", sourceUrl: `${rig.mediaUrl}/shop.jpg` }],
    });
    expect(emulator.posts().at(-1)!.media).toEqual([{ type: "image", contentType: "image/jpeg", size: JPEG.length }]);
  });

  test("every kind of body the adapter builds is a LocalPost of Google's contract", () => {
    const bodies = [
      {},
      { language_code: "de-CH", call_to_action: { action_type: "book", url: "https://x.example" } },
      { topic_type: "event", event: { title: "T", start: "2027-01-01", end: "2027-01-01" } },
      { topic_type: "offer", event: { title: "T", start: "2027-01-01", end: "2027-01-02" }, offer: {} },
    ].map((options) =>
      localPostOf({ content: "body", media: [{ url: "https://x.example/a.jpg", type: "image" }], options }),
    );
    for (const b of bodies) expect(contractErrors(b)).toEqual([]);
    // And the contract catches what Google would refuse as unknown or mistyped.
    expect(contractErrors({ summary: "x", topicType: "STANDARD", titel: "x" })).not.toEqual([]);
    expect(contractErrors({ topicType: "NEWS" })).not.toEqual([]);
    expect(contractErrors({ callToAction: { actionType: "LEARN_MORE", link: "https://x" } })).not.toEqual([]);
  });
});

describe("the emulator refuses what Google refuses", () => {
  const create = (body: unknown, token = String(ctx.credentials.access_token)) =>
    fetch(`${rig.served.url}/v4/${ctx.account.remoteId}/localPosts`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("an unknown field, a too-long summary, an invalid call to action, an event without a schedule", async () => {
    const unknown = await create({ summary: "x", topicType: "STANDARD", titel: "x" });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error.message).toContain('Unknown name "titel"');
    const long = await create({ summary: "é".repeat(1501), topicType: "STANDARD" });
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({
      error: { status: "INVALID_ARGUMENT", details: [{ errorDetails: [{ field: "summary", code: 2 }] }] },
    });
    expect((await create({ summary: "é".repeat(1500), topicType: "STANDARD" })).status).toBe(200);
    const callUrl = await create({
      summary: "x",
      topicType: "STANDARD",
      callToAction: { actionType: "CALL", url: "https://x" },
    });
    expect(callUrl.status).toBe(400);
    const noUrl = await create({ summary: "x", topicType: "STANDARD", callToAction: { actionType: "BOOK" } });
    expect((await noUrl.json()).error.details[0].errorDetails[0]).toMatchObject({
      field: "call_to_action.url",
      code: 1,
    });
    const event = await create({ summary: "x", topicType: "EVENT", event: { title: "E" } });
    expect((await event.json()).error.details[0].errorDetails[0]).toMatchObject({ field: "event.schedule" });
  });

  test("a bad token is 401; a token with only the older plus.business.manage scope posts but cannot list accounts", async () => {
    const bad = await create({ summary: "x", topicType: "STANDARD" }, "ya29.nope");
    expect(bad.status).toBe(401);
    expect((await bad.json()).error.status).toBe("UNAUTHENTICATED");
    emulator.grantOnly(["https://www.googleapis.com/auth/plus.business.manage"]);
    try {
      const consent = new URL(`${rig.served.url}/oauth/authorize`);
      consent.search = new URLSearchParams({
        client_id: "sandbox",
        redirect_uri: "http://127.0.0.1/cb",
        scope: `${BUSINESS_MANAGE} https://www.googleapis.com/auth/plus.business.manage`,
      }).toString();
      const code = new URL((await fetch(consent, { redirect: "manual" })).headers.get("location")!).searchParams.get(
        "code",
      )!;
      const answer = await fetch(`${rig.served.url}/oauth/token`, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: "http://127.0.0.1/cb",
          client_id: "sandbox",
          client_secret: "sandbox",
        }),
      });
      const older = (await answer.json()) as { access_token: string; scope: string };
      expect(older.scope).toBe("https://www.googleapis.com/auth/plus.business.manage");
      // The v4 posts take the older scope; the Account Management API does not.
      expect((await create({ summary: "older scope", topicType: "STANDARD" }, older.access_token)).status).toBe(200);
      const accounts = await fetch(`${rig.served.url}/v1/accounts`, {
        headers: { authorization: `Bearer ${older.access_token}` },
      });
      expect(accounts.status).toBe(403);
      expect((await accounts.json()).error.details[0].reason).toBe("ACCESS_TOKEN_SCOPE_INSUFFICIENT");
    } finally {
      emulator.grantOnly(null);
    }
  });

  test("locations.list needs a readMask", async () => {
    const res = await fetch(`${rig.served.url}/v1/${ctx.account.remoteId.split("/locations/")[0]}/locations`, {
      headers: { authorization: `Bearer ${String(ctx.credentials.access_token)}` },
    });
    expect(res.status).toBe(400);
  });
});

describe("outcomes", () => {
  test("a too-long summary that reached Google is a permanent failure naming the field", async () => {
    const out = await plugin.publish!(ctx, job("x".repeat(1501)));
    expect(out).toMatchObject({ kind: "permanent", code: "invalid_value" });
    if (out.kind === "permanent") expect(out.reason).toContain("summary");
  });

  test("a photo Google cannot fetch, and one that is no JPG or PNG", async () => {
    expect(await publish("lost", {}, "missing.jpg")).toMatchObject({ kind: "permanent", code: "photo_fetch_failed" });
    expect(await publish("gif", {}, "anim.gif")).toMatchObject({ kind: "permanent", code: "photo_upload_failed" });
  });

  test("a post Google rejects in review fails, and fetchRecent leaves it out of what a workflow copies", async () => {
    emulator.setReview("rejected");
    try {
      const first = await plugin.publish!(ctx, job("Rejected words"));
      expect(first.kind).toBe("submitted");
      expect(await settle(first)).toMatchObject({ kind: "permanent", code: "post_rejected" });
    } finally {
      emulator.setReview("live");
    }
    const recent = await plugin.fetchRecent!(ctx, null);
    expect(recent.some((p) => p.content === "Rejected words")).toBe(false);
    expect(recent.some((p) => p.content === "Our shop" && p.media[0]?.downloadable)).toBe(true);
  });

  test("a create that timed out is unknown, and found among the location's posts afterwards", async () => {
    // The same emulator on another port, reached by a client that gives up after 300 ms.
    const second = plainRig(plugin, emulator);
    const since = new Date(Date.now() - 1000);
    try {
      const hurried = { ...ctx, http: second.context({ credentials: {}, timeoutMs: 300 }).http };
      emulator.failNext({ kind: "timeout", delayMs: 1000 });
      expect(await plugin.publish!(hurried, job("Maybe posted"))).toMatchObject({ kind: "unknown" });
    } finally {
      await second.stop();
    }
    const q = { media: [], options: {}, since, until: new Date(), idempotencyToken: "t" };
    const found = await plugin.findPublished!(ctx, { ...q, content: "Maybe posted" });
    expect(found.kind).toBe("found");
    expect(await plugin.findPublished!(ctx, { ...q, content: "Never sent" })).toMatchObject({ kind: "absent" });
  });

  test("a token without the scope is permanent; quota is retryable; followers are the location's", async () => {
    emulator.failNext({ kind: "forbidden" });
    expect(await plugin.publish!(ctx, job("forbidden"))).toMatchObject({
      kind: "permanent",
      code: "insufficient_scope",
    });
    emulator.failNext({ kind: "rate_limit", retryAfterSeconds: 3 });
    expect(await plugin.publish!(ctx, job("quota"))).toMatchObject({ kind: "retryable", retryAfterMs: 3000 });
    emulator.setFollowers!(42);
    expect(await plugin.accountStats!(ctx)).toEqual({ followers: 42 });
  });
});

describe("platform_options at creation", () => {
  const validate = (platform_options: Record<string, unknown>, content = "Hello") =>
    rig.h.request("POST", "/v1/posts/validate", {
      token: rig.token,
      body: { content, targets: [{ account_id: rig.rows[0].id, platform_options }] },
    });
  const problems = async (options: Record<string, unknown>, content?: string) =>
    ((await validate(options, content)).body.data.targets[0].problems as { code: string; field: string }[]).map(
      // Problems name the target's field: targets[0].platform_options.…
      (p) => [p.code, p.field.replace(/^targets\[0\]\./, "")],
    );

  test("the rules between options Google enforces are 400s naming the option", async () => {
    expect(await problems({ topic_type: "event" })).toEqual([["invalid_platform_options", "platform_options.event"]]);
    expect(await problems({ call_to_action: { action_type: "call", url: "https://x.example" } })).toEqual([
      ["invalid_platform_options", "platform_options.call_to_action.url"],
    ]);
    expect(await problems({ call_to_action: { action_type: "book" } })).toEqual([
      ["invalid_platform_options", "platform_options.call_to_action.url"],
    ]);
    expect(await problems({ event: { title: "E", start: "2026-12-02", end: "2026-12-01" } })).toEqual([
      ["invalid_platform_options", "platform_options.event.end"],
    ]);
    expect(await problems({ event: { title: "E", start: "2026-02-30", end: "2026-03-01" } })).toEqual([
      ["invalid_platform_options", "platform_options.event.start"],
    ]);
    expect(
      await problems({
        offer: { coupon_code: "X" },
        event: { title: "E", start: "2026-12-01", end: "2026-12-02" },
        call_to_action: { action_type: "shop", url: "https://x.example" },
      }),
    ).toEqual([["invalid_platform_options", "platform_options.call_to_action"]]);
    expect(await problems({ topic_type: "standard", offer: { terms: "t" } })).toEqual([
      ["invalid_platform_options", "platform_options.offer"],
    ]);
    expect(await problems({ event: { title: "E", start: "2026-12-01T10:00Z", end: "2026-12-02" } })).toEqual([
      ["invalid_platform_options", "platform_options.event.start"],
    ]);
    expect(await problems({}, "x".repeat(1501))).toEqual([["content_too_long", "content"]]);
    const ok = await validate({ event: { title: "E", start: "2026-12-01T10:00", end: "2026-12-01T12:00" } });
    expect(ok.body.data.targets[0].ok).toBe(true);
  });
});

test("through the API and the engine: an event post is created, reviewed and published with its Google link", async () => {
  const bakery = rig.rows.find((r) => r.username === "Sandbox Bakery")!;
  const created = await rig.h.request("POST", "/v1/posts", {
    token: rig.token,
    body: {
      content: "Christmas tasting at the bakery",
      targets: [
        {
          account_id: bakery.id,
          platform_options: {
            topic_type: "event",
            event: { title: "Christmas tasting", start: "2026-12-20T10:00", end: "2026-12-20T16:00" },
            call_to_action: { action_type: "sign_up", url: "https://bakery.example/tasting" },
          },
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  const engine = createEngine(rig.h.ctx, { submitPollMs: 1000 });
  try {
    for (let i = 0; i < 4; i++) {
      await engine.runUntilIdle();
      rig.h.clock.advance(1000);
    }
  } finally {
    await engine.stop();
  }
  const post = (await rig.h.request("GET", `/v1/posts/${created.body.data.id}`, { token: rig.token })).body.data;
  expect(post.status).toBe("published");
  expect(post.targets[0].platform_post_url).toStartWith("https://local.google.com/place?");
  expect(emulator.received().at(-1)).toMatchObject({
    summary: "Christmas tasting at the bakery",
    topicType: "EVENT",
    callToAction: { actionType: "SIGN_UP", url: "https://bakery.example/tasting" },
    event: { title: "Christmas tasting" },
  });
});
