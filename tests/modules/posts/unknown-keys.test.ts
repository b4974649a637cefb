import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { posts } from "../../../src/db/schema.ts";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// Clients of the upstream service send keys of their own on posts (a real one: duplicateKey,
// source_file_path, origin, and per target username, platform and status). The upstream ignores them;
// so does Crier on create, update and validate, naming them in Crier-Ignored-Fields. Drafts stay strict.

let h: Harness;
let token: string;
let bsky: string;

beforeAll(async () => {
  h = await postsHarness();
  const p = await h.profile();
  token = p.token;
  bsky = (
    await upsertConnectedAccount(h.ctx, {
      profileId: p.profileId,
      platform: "bluesky",
      remoteId: "did:plc:alice",
      username: "alice.test",
      credentials: { did: "did:plc:alice", accessJwt: "a", refreshJwt: "r", handle: "alice.test" },
    })
  ).id;
});
afterAll(() => h.close());

const later = () => new Date(h.clock.now().getTime() + 86_400_000).toISOString();
const withClientKeys = (extra: Record<string, unknown> = {}) => ({
  content: "Hello from a client of the upstream API",
  publish_at: later(),
  duplicateKey: "clip-0001",
  source_file_path: "/home/me/clips/clip.mp4",
  origin: "manual",
  targets: [{ account_id: bsky, username: "typed-by-client", platform: "twitter", status: "published" }],
  ...extra,
});

describe("unknown keys on posts", () => {
  test("create ignores them, stores and echoes none, and names them in Crier-Ignored-Fields", async () => {
    const res = await h.request("POST", "/v1/posts", { token, body: withClientKeys() });
    expect(res.status).toBe(201);
    expect(res.headers.get("crier-ignored-fields")?.split(", ").sort()).toEqual(
      [
        "duplicateKey",
        "origin",
        "source_file_path",
        "targets[].platform",
        "targets[].status",
        "targets[].username",
      ].sort(),
    );
    const post = res.body.data;
    expect(post).not.toHaveProperty("duplicateKey");
    expect(post).not.toHaveProperty("source_file_path");
    expect(post.origin).not.toBe("manual");
    expect(post.targets[0].status).toBe("scheduled");
    // The target's own fields are the server's, never the client's bookkeeping.
    expect(post.targets[0].username).toBe("alice.test");
    expect(post.targets[0].platform).toBe("bluesky");
    const read = await h.request("GET", `/v1/posts/${post.id}`, { token });
    expect(JSON.stringify(read.body)).not.toContain("clip-0001");
    expect(JSON.stringify(read.body)).not.toContain("clips/clip.mp4");
    expect(JSON.stringify(read.body)).not.toContain("typed-by-client");
  });

  test("a client can never set origin, not even to a value the server uses", async () => {
    const res = await h.request("POST", "/v1/posts", { token, body: withClientKeys({ origin: "workflow" }) });
    expect(res.status).toBe(201);
    expect(res.body.data.origin).not.toBe("workflow");
  });

  test("a body without unknown keys has no Crier-Ignored-Fields header", async () => {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "plain", publish_at: later(), targets: [{ account_id: bsky }] },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("crier-ignored-fields")).toBeNull();
  });

  test("known keys with a wrong type or value are still a 400 and store nothing", async () => {
    const count = async () => (await h.db.db.select({ id: posts.id }).from(posts)).length;
    const before = await count();
    for (const body of [
      withClientKeys({ publish_at: 5 }),
      withClientKeys({ content: ["x"] }),
      withClientKeys({ targets: [{ account_id: bsky, content_override: 3, username: "x" }] }),
      withClientKeys({ targets: [] }),
    ]) {
      const res = await h.request("POST", "/v1/posts", { token, body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
    expect(await count()).toBe(before);
  });

  test("PATCH and validate ignore them too", async () => {
    const created = await h.request("POST", "/v1/posts", { token, body: withClientKeys() });
    const patched = await h.request("PATCH", `/v1/posts/${created.body.data.id}`, {
      token,
      body: { content: "Edited", publish_at: later(), duplicateKey: "clip-0001", origin: "manual" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.content).toBe("Edited");
    expect(patched.headers.get("crier-ignored-fields")).toBe("duplicateKey, origin");
    const validated = await h.request("POST", "/v1/posts/validate", { token, body: withClientKeys() });
    expect(validated.status).toBe(200);
    expect(validated.body.data.ok).toBe(true);
    expect(validated.headers.get("crier-ignored-fields")).toContain("targets[].username");
  });

  test("drafts stay strict: the spec allows no other properties there", async () => {
    const res = await h.request("POST", "/v1/drafts", { token, body: { content: "x", duplicateKey: "k" } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe("body.duplicateKey is not an allowed property");
  });
});
