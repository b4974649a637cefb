/**
 * LinkedIn company pages (CRIER_LINKEDIN_ORGANIZATIONS=true): the connect brings the member and each page
 * it administers as accounts of their own; a page publishes text, images and video and its first comment
 * as the organization, reports its share statistics and follower count, and lists its posts for
 * workflows. A page the member does not administer, or a token without w_organization_social, is refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PluginContext } from "../../src/platform/sdk.ts";
import linkedin from "../../plugins/linkedin/index.ts";
import { createLinkedInEmulator, type LinkedInEmulator } from "../../plugins/linkedin/emulator.ts";
import { job, oauthRig, type OAuthRig } from "./support.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";
import { workflowHarness } from "../support/workflow-kit.ts";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";

const ORG = "urn:li:organization:2414183";
const OTHER_ORG = "urn:li:organization:1337";

let rig: OAuthRig<LinkedInEmulator>;
let emulator: LinkedInEmulator;
let org: PluginContext;
let member: PluginContext;
let authorizationScope: string[];

beforeAll(async () => {
  const files: Record<string, { bytes: Uint8Array<ArrayBuffer>; type: string }> = {
    "/a.png": { bytes: await makeImage({ width: 120, height: 80, format: "png" }), type: "image/png" },
    "/four.mp4": { bytes: makeVideo({ width: 640, height: 480, seconds: 4 }), type: "video/mp4" },
  };
  emulator = createLinkedInEmulator();
  rig = await oauthRig(emulator, {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    media: (req) => {
      const f = files[new URL(req.url).pathname];
      return f ? new Response(f.bytes, { headers: { "content-type": f.type } }) : new Response(null, { status: 404 });
    },
    mediaMaxBytes: 4 * 1024 * 1024,
    settings: { ORGANIZATIONS: "true", EXTRA_SCOPES: "r_member_social" },
  });
  const start = await rig.h.request("POST", "/v1/accounts/connect/linkedin", { token: rig.token });
  authorizationScope = new URL(start.body.data.authorization_url).searchParams.get("scope")!.split(" ");
  const orgRow = rig.rows.find((r) => r.remoteId === ORG)!;
  const memberRow = rig.rows.find((r) => r.remoteId === "sandboxMember01")!;
  org = rig.context(orgRow);
  member = rig.context(memberRow);
});
afterAll(() => rig.stop());

const settle = async (ctx: PluginContext, out: Awaited<ReturnType<NonNullable<typeof linkedin.publish>>>) => {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await linkedin.checkStatus!(ctx, out.handle);
  return out;
};

test("connect asks for the organization scopes and stores the member and the page it administers, not others", () => {
  expect(rig.connectPage.html).toContain("Account connected");
  expect(authorizationScope).toEqual(
    expect.arrayContaining([
      "w_member_social",
      "w_organization_social",
      "r_organization_social",
      "rw_organization_admin",
    ]),
  );
  expect(rig.rows.map((r) => [r.remoteId, r.username]).sort()).toEqual([
    ["sandboxMember01", "Sandbox Member"],
    [ORG, "Sandbox Company"],
  ]);
  const page = rig.rows.find((r) => r.remoteId === ORG)!;
  expect(page.metadata).toMatchObject({
    kind: "organization",
    organization_urn: ORG,
    vanity_name: "sandbox-company",
    page_url: "https://www.linkedin.com/company/sandbox-company",
  });
  expect(org.credentials.author_urn).toBe(ORG);
  expect(org.credentials.member_urn).toBe("urn:li:person:sandboxMember01");
});

test("the page publishes text, an image and a video as the organization, never as the member", async () => {
  const text = await linkedin.publish!(org, job("Page news (v2) #launch"));
  const image = await linkedin.publish!(
    org,
    job("page image", { media: [{ url: `${rig.mediaUrl}/a.png`, type: "image", alt_text: "a chart" }] }),
  );
  const video = await settle(
    org,
    await linkedin.publish!(org, job("page video", { media: [{ url: `${rig.mediaUrl}/four.mp4`, type: "video" }] })),
  );
  for (const out of [text, image, video]) expect(out.kind).toBe("published");
  const pageIds = (await linkedin.fetchRecent!(org, null)).map((p) => p.platformPostId);
  const memberIds = (await linkedin.fetchRecent!(member, null)).map((p) => p.platformPostId);
  for (const out of [text, image, video]) {
    if (out.kind !== "published") continue;
    expect(pageIds).toContain(out.platformPostId);
    expect(memberIds).not.toContain(out.platformPostId);
  }
  const recent = await linkedin.fetchRecent!(org, null);
  expect(recent.map((p) => [p.content, p.kind])).toEqual([
    ["page video", "video"],
    ["page image", "image"],
    ["Page news (v2) #launch", "text"],
  ]);
  expect(recent[0].media).toEqual([{ url: recent[0].url!, type: "video", downloadable: false }]);
});

test("the page's numbers come from organization share statistics; its audience from its follower count", async () => {
  const out = await linkedin.publish!(org, job("measured page post"));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { impressions: 900, clicks: 40, likes: 12, comments: 3, shares: 2 });
  expect((await linkedin.metrics!(org, [out.platformPostId]))[out.platformPostId]).toEqual({
    views: 900,
    likes: 12,
    comments: 3,
    shares: 2,
    saves: null,
  });
  emulator.setFollowers!(4321);
  expect(await linkedin.accountStats!(org)).toEqual({ followers: 4321 });
  // LinkedIn gives apps no member follower count: unknown, not zero.
  expect(await linkedin.accountStats!(member)).toEqual({ followers: null });
});

test("the first comment under a page's post is made as the page, and found again as its own", async () => {
  const out = await linkedin.publish!(org, job("with a first comment"));
  if (out.kind !== "published") throw new Error(out.kind);
  const comment = {
    text: "Sign up at example.com",
    parent: { platformPostId: out.platformPostId, url: out.url },
    options: {},
    idempotencyToken: crypto.randomUUID(),
  };
  const made = await linkedin.firstComment!.publish(org, comment);
  expect(made.kind).toBe("published");
  const listed = await fetch(
    `${rig.served.url}/rest/socialActions/${encodeURIComponent(out.platformPostId)}/comments`,
    {
      headers: {
        authorization: `Bearer ${String(org.credentials.access_token)}`,
        "linkedin-version": "202607",
        "x-restli-protocol-version": "2.0.0",
      },
    },
  );
  const body = (await listed.json()) as { elements: { actor: string; message: { text: string } }[] };
  expect(body.elements.map((c) => [c.actor, c.message.text])).toEqual([[ORG, "Sign up at example.com"]]);
  const window = { since: new Date(Date.now() - 60_000), until: new Date(Date.now() + 60_000) };
  expect((await linkedin.firstComment!.find!(org, comment, window)).kind).toBe("found");
  expect((await linkedin.firstComment!.find!(member, comment, window)).kind).toBe("absent");
});

test("a page the member does not administer is refused for good, and nothing is posted", async () => {
  const elsewhere = { ...org, credentials: { ...org.credentials, author_urn: OTHER_ORG } };
  const before = emulator.posts().length;
  expect(await linkedin.publish!(elsewhere, job("not my page"))).toMatchObject({
    kind: "permanent",
    code: "access_denied",
  });
  expect(
    await linkedin.publish!(
      elsewhere,
      job("nor its image", { media: [{ url: `${rig.mediaUrl}/a.png`, type: "image" }] }),
    ),
  ).toMatchObject({ kind: "permanent", code: "access_denied" });
  expect(emulator.posts().length).toBe(before);
  await expect(linkedin.metrics!(elsewhere, ["urn:li:share:1"])).rejects.toThrow(/403|administrator/);
});

test("without w_organization_social (a member who unticked it) the page cannot post; the member still can", async () => {
  const consent = new URL(`${rig.served.url}/oauth/authorize`);
  consent.search = new URLSearchParams({
    client_id: "sandbox",
    redirect_uri: "http://127.0.0.1/cb",
    scope: "openid profile w_member_social rw_organization_admin",
  }).toString();
  const code = new URL((await fetch(consent, { redirect: "manual" })).headers.get("location")!).searchParams.get(
    "code",
  )!;
  const granted = await fetch(`${rig.served.url}/oauth/v2/accessToken`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: "http://127.0.0.1/cb",
      client_id: "sandbox",
      client_secret: "sandbox",
    }),
  });
  const token = ((await granted.json()) as { access_token: string }).access_token;
  const page = { ...org, credentials: { ...org.credentials, access_token: token } };
  const person = { ...member, credentials: { ...member.credentials, access_token: token } };
  expect(await linkedin.publish!(page, job("page without the scope"))).toMatchObject({
    kind: "permanent",
    code: "access_denied",
  });
  expect((await linkedin.publish!(person, job("member with its own scope"))).kind).toBe("published");
});

test("a post through the API to the page account is published by the engine as the page", async () => {
  const page = rig.rows.find((r) => r.remoteId === ORG)!;
  const created = await rig.h.request("POST", "/v1/posts", {
    token: rig.token,
    body: { content: "from the API to the page", targets: [{ account_id: page.id }] },
  });
  expect(created.status).toBe(201);
  const engine = createEngine(rig.h.ctx, { random: () => 0.5 });
  await engine.runUntilIdle();
  await engine.stop();
  const post = await rig.h.request("GET", `/v1/posts/${created.body.data.id}`, { token: rig.token });
  expect(post.body.data.status).toBe("published");
  const id = post.body.data.targets[0].platform_post_id;
  expect((await linkedin.fetchRecent!(org, null)).map((p) => p.platformPostId)).toContain(id);
});

test("without CRIER_LINKEDIN_ORGANIZATIONS the consent asks for no organization scope and only the member connects", async () => {
  const plain = await oauthRig(createLinkedInEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/v2/accessToken",
    media: () => new Response(null, { status: 404 }),
  });
  try {
    const start = await plain.h.request("POST", "/v1/accounts/connect/linkedin", { token: plain.token });
    const scope = new URL(start.body.data.authorization_url).searchParams.get("scope")!.split(" ");
    expect(scope).toEqual(["openid", "profile", "w_member_social"]);
    expect(plain.rows.map((r) => r.remoteId)).toEqual(["sandboxMember01"]);
  } finally {
    await plain.stop();
  }
});

test("a company page is a workflow source: what the page posts is copied to the destination", async () => {
  const h = await workflowHarness();
  try {
    await h.connect("linkedin");
    const rows = await h.db.db.select().from(accounts).where(eq(accounts.profileId, h.profileId));
    const page = rows.find((r) => r.remoteId === ORG)!;
    const tg = await h.connect("telegram", { channel: "@li_page_copies" });
    const before = await h.native(page.id, "page history p0, not copied");
    expect(before).toStartWith("urn:li:share:");
    h.clock.advance(1000);
    const wf = await h.request("POST", "/v1/workflows", {
      token: h.token,
      body: { name: "page", source_account_id: page.id, target_account_ids: [tg], is_active: true },
    });
    expect(wf.status).toBe(201);
    // LinkedIn stamps posts with its own (the emulator's wall) clock: p1 must come after last_enabled_at.
    await Bun.sleep(Math.max(0, h.clock.now().getTime() - Date.now() + 20));
    await h.native(page.id, "New on the page p1 (v2)");
    h.clock.advance(1000);
    await h.engine.runUntilIdle();
    expect(h.postsWith("telegram", "p1")).toEqual(["New on the page p1 (v2)"]);
    expect(h.postsWith("telegram", "p0")).toEqual([]);
  } finally {
    await h.stop();
  }
});
