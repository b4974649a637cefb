/**
 * Workflows end to end: a listening app (so hosted connect pages and OAuth redirects work) with a sandbox
 * profile, whose accounts are connected the way a user connects them and whose every platform call goes
 * to Crier's in-process emulators. `native` posts on a source account as if the user posted there.
 */
import { eq } from "drizzle-orm";
import { accounts, profiles } from "../../src/db/schema.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import { createMediaAccess } from "../../src/platform/host/media-guard.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import type { Emulator, MediaItem } from "../../src/platform/sdk.ts";
import type { Config } from "../../src/config.ts";
import { followAuthorization, listeningHarness, submitHostedForm, type ListeningHarness } from "./connect-kit.ts";

export interface WorkflowHarness extends ListeningHarness {
  token: string;
  profileId: string;
  engine: Engine;
  connect(platform: string, values?: Record<string, string>): Promise<string>;
  native(accountId: string, content: string, media?: MediaItem[], options?: Record<string, unknown>): Promise<string>;
  emulator(platform: string): Emulator;
  /** Posts on a destination's emulator whose text contains `marker`. */
  postsWith(platform: string, marker: string): string[];
  /** Serves a file on 127.0.0.1 (as a user's own web server would) and returns its URL. */
  serveFile(bytes: Uint8Array<ArrayBuffer>, contentType: string): string;
}

/**
 * The emulators, and the files native posts are made from, listen on loopback, which the media guard
 * refuses; the engine and native posts here may reach loopback, and only loopback.
 */
const loopback = (ip: string) => ip === "127.0.0.1" || ip === "::1";

export async function workflowHarness(overrides: Partial<Config> = {}): Promise<WorkflowHarness> {
  const h = await listeningHarness(
    {},
    { workflowPollIntervalSeconds: 300, ...overrides },
    // The sandbox emulators download native posts' files (Instagram's image_url) through the guard too.
    { emulatorMediaAddress: loopback },
  );
  const { token, profileId } = await h.profile({ sandbox: true });
  const engine = createEngine(h.ctx, { random: () => 0.5, allowMediaAddress: loopback });
  const files = new Map<string, { bytes: Uint8Array<ArrayBuffer>; contentType: string }>();
  const fileServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const f = files.get(new URL(req.url).pathname);
      return f
        ? new Response(f.bytes, { headers: { "content-type": f.contentType } })
        : new Response("not found", { status: 404 });
    },
  });
  const stop = h.stop;
  const emulator = (platform: string) => h.ctx.platforms.emulatorFor(platform, profileId)!;
  return Object.assign(h, {
    token,
    profileId,
    engine,
    emulator,
    async connect(platform: string, values: Record<string, string> = {}) {
      const before = new Set(
        (await h.request("GET", "/v1/accounts", { token })).body.data.map((a: { id: string }) => a.id),
      );
      const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
      if (res.status !== 201) throw new Error(`connect ${platform}: ${JSON.stringify(res.body)}`);
      const page = res.body.data.hosted_url
        ? await submitHostedForm(res.body.data.hosted_url, values)
        : await followAuthorization(res.body.data.authorization_url);
      if (page.status !== 200) throw new Error(`connect ${platform}: ${page.status} ${page.html.slice(0, 300)}`);
      const after = (await h.request("GET", "/v1/accounts", { token })).body.data as { id: string; platform: string }[];
      const added = after.find((a) => a.platform === platform && !before.has(a.id));
      if (!added) throw new Error(`connect ${platform}: no new account`);
      return added.id;
    },
    async native(accountId: string, content: string, media: MediaItem[] = [], options: Record<string, unknown> = {}) {
      const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, accountId));
      const [p] = await h.db.db.select().from(profiles).where(eq(profiles.id, row.profileId));
      const guard = createMediaAccess({ maxBytes: 100_000_000, allowAddress: loopback });
      const { plugin, context } = providerFor(h.ctx, row, { sandbox: p.sandbox, media: guard });
      let out = await plugin.publish!(context, { content, media, options, idempotencyToken: crypto.randomUUID() });
      // Platforms that process uploads (YouTube) answer later: asked again, as the engine would.
      for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await plugin.checkStatus!(context, out.handle);
      if (out.kind !== "published") throw new Error(`native post: ${JSON.stringify(out)}`);
      return out.platformPostId;
    },
    postsWith: (platform: string, marker: string) =>
      emulator(platform)
        .posts()
        .map((p) => p.text)
        .filter((t) => t.includes(marker)),
    serveFile(bytes: Uint8Array<ArrayBuffer>, contentType: string) {
      const path = `/files/${files.size + 1}`;
      files.set(path, { bytes, contentType });
      return `http://127.0.0.1:${fileServer.port}${path}`;
    },
    async stop() {
      await engine.stop();
      await fileServer.stop(true);
      await stop();
    },
  });
}
