// What the plugin tests share: the emulator served over real HTTP on 127.0.0.1, the real provider HTTP
// client pointed at it, and the real media fetch guard reading files served from loopback (the only rule
// relaxed: tests have no public addresses). Bluesky and Telegram build a plugin context directly (rig);
// the OAuth platforms connect an account through the app the way a user does (oauthRig).
import { createProviderHttp } from "../../src/platform/host/provider-http.ts";
import { createMediaAccess } from "../../src/platform/host/media-guard.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createLogger } from "../../src/log.ts";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema.ts";
import { providerFor } from "../../src/platform/host/provider.ts";
import { followAuthorization, listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";
import { expect } from "bun:test";
import type {
  ConnectContext,
  Credentials,
  Emulator,
  Plugin,
  PluginContext,
  PublishJob,
} from "../../src/platform/sdk.ts";

export const silent = createLogger("silent");

type AccountRow = typeof accounts.$inferSelect;

export interface MediaFile {
  type: string;
  bytes: Uint8Array<ArrayBuffer>;
}

/** Serves files by name on a loopback port, the way a public bucket would. */
export function serveMedia(files: Record<string, MediaFile>) {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const f = files[new URL(req.url).pathname.slice(1)];
      return f
        ? new Response(f.bytes, { headers: { "content-type": f.type } })
        : new Response("not found", { status: 404 });
    },
  });
  return { url: (name: string) => `http://127.0.0.1:${server.port}/${name}`, stop: () => server.stop(true) };
}

export interface Rig<E extends Emulator> {
  emulator: E;
  served: ServedEmulator;
  connectContext(settings?: Record<string, string>): ConnectContext;
  /** A plugin context for an account; saved credentials land in `saved`. */
  context(p: {
    credentials: Credentials;
    remoteId?: string;
    username?: string;
    metadata?: Record<string, unknown>;
    settings?: Record<string, string>;
    timeoutMs?: number;
  }): PluginContext & { saved: Credentials[] };
  stop(): Promise<void>;
}

export function rig<E extends Emulator>(
  plugin: Plugin,
  emulator: E,
  defaults: { settings?: Record<string, string>; timeoutMs?: number; now?: () => number } = {},
): Rig<E> {
  const served = serveEmulator(emulator);
  const now = () => new Date(defaults.now?.() ?? Date.now());
  const http = (timeoutMs?: number) =>
    createProviderHttp({
      baseUrl: served.url,
      timeoutMs: timeoutMs ?? defaults.timeoutMs ?? 5000,
      log: silent,
      classify: plugin.classifyResponse?.bind(plugin),
    });
  return {
    emulator,
    served,
    connectContext: (settings) => ({ http: http(), settings: { ...defaults.settings, ...settings }, log: silent, now }),
    context(p) {
      const saved: Credentials[] = [];
      const ctx: PluginContext & { saved: Credentials[] } = {
        saved,
        http: http(p.timeoutMs),
        account: {
          id: crypto.randomUUID(),
          remoteId: p.remoteId ?? "remote",
          username: p.username ?? "user",
          metadata: p.metadata ?? {},
        },
        credentials: p.credentials,
        async saveCredentials(c) {
          saved.push(c);
          ctx.credentials = c;
        },
        media: createMediaAccess({ maxBytes: 200_000_000, log: silent, allowAddress: () => true }),
        settings: { ...defaults.settings, ...p.settings },
        log: silent,
        now,
      };
      return ctx;
    },
    stop: () => served.stop(),
  };
}

export interface OAuthRig<E extends Emulator> {
  emulator: E;
  served: ServedEmulator;
  h: ListeningHarness;
  /** The page the user lands on after consenting, as a browser would see it. */
  connectPage: { status: number; html: string };
  /** The accounts the connect stored, in the order the database returns them. */
  rows: AccountRow[];
  /** The API key of the profile that connected them. */
  token: string;
  /** Where the loopback media server answers, without a trailing slash. */
  mediaUrl: string;
  /** The plugin context the engine would build for an account. */
  context(row: AccountRow): PluginContext;
  stop(): Promise<void>;
}

export interface OAuthRigOptions {
  authorizePath: string;
  tokenPath: string;
  /** The setting holding the client id (TikTok: CLIENT_KEY). */
  clientIdSetting?: string;
  media(req: Request): Response;
  /** Reads media from loopback up to this size; without it, the engine's default media access. */
  mediaMaxBytes?: number;
  /** More CRIER_<PLATFORM>_<NAME> settings, by suffix (Reddit: USERNAME). */
  settings?: Record<string, string>;
}

/**
 * What the OAuth plugin tests share: the emulator served over real HTTP, a listening server whose
 * CRIER_<PLATFORM>_* settings point the plugin at it, a user connecting an account through the consent
 * redirect, and a loopback server for media files. The test asserts what the connect produced.
 */
export async function oauthRig<E extends Emulator>(emulator: E, p: OAuthRigOptions): Promise<OAuthRig<E>> {
  const served = serveEmulator(emulator);
  const media = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: p.media });
  const prefix = `CRIER_${emulator.platform.toUpperCase()}_`;
  const h = await listeningHarness({
    [`${prefix}API_URL`]: served.url,
    [`${prefix}AUTHORIZE_URL`]: `${served.url}${p.authorizePath}`,
    [`${prefix}TOKEN_URL`]: `${served.url}${p.tokenPath}`,
    [`${prefix}${p.clientIdSetting ?? "CLIENT_ID"}`]: "sandbox",
    [`${prefix}CLIENT_SECRET`]: "sandbox",
    ...Object.fromEntries(Object.entries(p.settings ?? {}).map(([k, v]) => [prefix + k, v])),
  });
  const { token, profileId } = await h.profile();
  const res = await h.request("POST", `/v1/accounts/connect/${emulator.platform}`, { token });
  const connectPage = await followAuthorization(res.body.data.authorization_url);
  const rows = await h.db.db.select().from(accounts).where(eq(accounts.profileId, profileId));
  const mediaAccess =
    p.mediaMaxBytes === undefined
      ? {}
      : { media: createMediaAccess({ maxBytes: p.mediaMaxBytes, allowAddress: () => true }) };
  return {
    emulator,
    served,
    h,
    connectPage,
    rows,
    token,
    mediaUrl: `http://127.0.0.1:${media.port}`,
    context: (row) => providerFor(h.ctx, row, { sandbox: false, ...mediaAccess }).context,
    async stop() {
      await h.stop();
      await served.stop();
      media.stop(true);
    },
  };
}

export interface ConnectedAccount<E extends Emulator> {
  rig: OAuthRig<E>;
  emulator: E;
  /** The plugin context of the connected account, as the engine builds it. */
  ctx: PluginContext;
  /** A file's URL on the loopback media server. */
  url(file: string): string;
}

/**
 * The usual OAuth plugin test start (call it in beforeAll, stop `rig` in afterAll): one account connects
 * through the consent redirect, the page says so, and its username is the emulator's when one is given.
 */
export async function connectOne<E extends Emulator>(
  emulator: E,
  p: OAuthRigOptions & { username?: string },
): Promise<ConnectedAccount<E>> {
  const rig = await oauthRig(emulator, p);
  expect(rig.connectPage.html).toContain("Account connected");
  const [row] = rig.rows;
  if (p.username !== undefined) expect(row.username).toBe(p.username);
  return { rig, emulator, ctx: rig.context(row), url: (file) => `${rig.mediaUrl}/${file}` };
}

/** A publish job as the engine hands one over, holding nothing but what the test names. */
export function job(content: string | Partial<PublishJob> = "", extra: Partial<PublishJob> = {}): PublishJob {
  const named = typeof content === "string" ? { content, ...extra } : { ...content, ...extra };
  return { content: "", media: [], options: {}, idempotencyToken: crypto.randomUUID(), ...named };
}
