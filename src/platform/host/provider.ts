/**
 * Builds what a plugin runs with: the ProviderHttp pointed at the right base URL (real platform, an
 * override from the environment, or the sandbox emulator), the platform's settings, and for an account
 * its decrypted credentials and a way to save refreshed ones.
 */
import type { Clock } from "../../clock.ts";
import { secretKeys, type Config } from "../../config.ts";
import { openJson } from "../../db/crypto.ts";
import type { Logger } from "../../log.ts";
import type { ConnectContext, Credentials, MediaAccess, Plugin, PluginContext, ProviderHttp } from "../sdk.ts";
import type { PlatformRegistry } from "./catalog.ts";
import { createMediaAccess, type OwnStorageOpener } from "./media-guard.ts";
import { createProviderHttp } from "./provider-http.ts";
import { firstOpener, sandboxMediaOpener } from "./sandbox-media.ts";
import { inProcessWebSocket } from "./sandbox-socket.ts";
import { serverApps, type StoredAppLookup } from "./server-apps.ts";

/** Where credentials a plugin refreshed are kept: the accounts service, handed in by whoever builds the context. */
export interface CredentialStore {
  save(accountId: string, credentials: Credentials): Promise<void>;
}

/** What the host side needs of the application; src/context.ts's AppContext is one. */
export interface HostContext {
  config: Config;
  clock: Clock;
  log: Logger;
  platforms: PlatformRegistry;
  credentials: CredentialStore;
}

/** The stored account a plugin runs for (a row of accounts; credentials encrypted, null once disconnected). */
export interface HostedAccount {
  id: string;
  /** Its profile: a sandbox profile's accounts reach that profile's own emulators. */
  profileId: string;
  platform: string;
  remoteId: string;
  username: string;
  metadata: Record<string, unknown> | null;
  credentials: string | null;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export const envPrefix = (platform: string) => `CRIER_${platform.toUpperCase()}_`;

/**
 * CRIER_<PLATFORM>_* variables of the environment, each under its full name and under its suffix
 * (CRIER_TWITTER_CLIENT_ID is also settings.CLIENT_ID).
 */
export function platformSettings(
  ctx: Pick<HostContext, "config">,
  platform: string,
): Record<string, string | undefined> {
  // The environment is read once per platform (config.env is never changed after loading): the engine
  // asks for every publish, and the whole environment is scanned for the prefix.
  let byPlatform = settingsCache.get(ctx.config.env);
  if (!byPlatform) settingsCache.set(ctx.config.env, (byPlatform = new Map()));
  let settings = byPlatform.get(platform);
  if (!settings) {
    const prefix = envPrefix(platform);
    settings = {};
    for (const [k, v] of Object.entries(ctx.config.env)) {
      if (!k.startsWith(prefix) || v === undefined || v.trim() === "") continue;
      settings[k] = v;
      settings[k.slice(prefix.length)] = v;
    }
    byPlatform.set(platform, settings);
  }
  // A copy: the plugin that receives it may write to it.
  return { ...settings };
}
const settingsCache = new WeakMap<Config["env"], Map<string, Record<string, string | undefined>>>();

/**
 * Settings for a sandbox profile: placeholders for every required setting, what the emulator asks for,
 * and OAuth endpoints on the emulator (whose authorize page redirects straight back with a code).
 */
export function sandboxSettings(
  ctx: HostContext,
  platform: string,
  profileId: string,
): Record<string, string | undefined> {
  const plugin = ctx.platforms.get(platform);
  const base = sandboxBaseUrl(ctx, platform);
  const prefix = envPrefix(platform);
  const out: Record<string, string | undefined> = {};
  // Like platformSettings: each value under its suffix and under its full CRIER_<PLATFORM>_ name.
  const put = (name: string, value: string) => {
    const suffix = settingSuffix(platform, name);
    out[suffix] = value;
    out[prefix + suffix] = value;
  };
  for (const name of plugin?.connect?.requiredSettings ?? []) put(name, "sandbox");
  put("AUTHORIZE_URL", `${base}/oauth/authorize`);
  put("TOKEN_URL", `${base}/oauth/token`);
  for (const [k, v] of Object.entries(ctx.platforms.emulatorFor(platform, profileId)?.sandboxSettings ?? {})) put(k, v);
  return out;
}

/** A setting's name without CRIER_<PLATFORM>_, whichever form a plugin wrote it in. */
export function settingSuffix(platform: string, name: string): string {
  const prefix = envPrefix(platform);
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/**
 * Whether a plugin runs against a real platform or, for a sandbox profile, against that profile's own
 * emulators in this process.
 */
export type Target = { sandbox: false } | { sandbox: true; profileId: string };

/** The settings a plugin runs with: the environment's, or the sandbox's for sandbox profiles. */
export function settingsFor(ctx: HostContext, platform: string, opts: Target): Record<string, string | undefined> {
  return opts.sandbox ? sandboxSettings(ctx, platform, opts.profileId) : platformSettings(ctx, platform);
}

/** Where sandbox profiles reach the platform: the emulator this process serves. */
export function sandboxBaseUrl(ctx: HostContext, platform: string): string {
  return `${ctx.config.publicUrl.replace(/\/+$/, "")}/sandbox/${platform}`;
}

/**
 * What a sandbox target's platform_post_url is: its entry in the sandbox inbox on this server, since the
 * emulator's own links point at a real platform where the post does not exist.
 */
export function sandboxPostUrl(ctx: HostContext, targetId: string): string {
  return `${ctx.config.publicUrl.replace(/\/+$/, "")}/sandbox#post-${targetId}`;
}

/** CRIER_<PLATFORM>_API_URL, else the plugin's real API; the emulator for sandbox profiles. */
export function apiBaseUrl(ctx: HostContext, plugin: Plugin, opts: { sandbox: boolean }): string {
  if (opts.sandbox) return sandboxBaseUrl(ctx, plugin.platform);
  return (ctx.config.env[`${envPrefix(plugin.platform)}API_URL`]?.trim() || plugin.defaultApiUrl).replace(/\/+$/, "");
}

/**
 * Sandbox calls go straight to the process's emulator instead of out through PUBLIC_URL, which may sit
 * behind a proxy this process cannot reach. URLs outside the sandbox prefix use the network as usual.
 */
function sandboxFetch(ctx: HostContext, platform: string, profileId: string): typeof fetch {
  const prefix = sandboxBaseUrl(ctx, platform);
  const f = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const emulator = ctx.platforms.emulatorFor(platform, profileId);
    if (!emulator || !(req.url === prefix || req.url.startsWith(prefix + "/") || req.url.startsWith(prefix + "?")))
      return fetch(req);
    const path = new URL(req.url).pathname.slice(new URL(prefix).pathname.length) || "/";
    // The caller's timeout must cut an in-process answer short exactly as it would a network one.
    const signal = init?.signal;
    if (!signal) return emulator.handle(req, path);
    if (signal.aborted) throw signal.reason;
    return await new Promise<Response>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      emulator
        .handle(req, path)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener("abort", onAbort));
    });
  };
  return f as typeof fetch;
}

export function requirePlugin(ctx: HostContext, platform: string): Plugin {
  const plugin = ctx.platforms.get(platform);
  if (!plugin) throw new Error(`no plugin for platform "${platform}"`);
  return plugin;
}

/**
 * The client for a platform, made once per context, platform and sandbox or not: it holds no state of its
 * own, and the engine asks for one on every publish. Shared, so never written to: a caller that needs
 * another request() wraps it (src/engine/workflow-poll.ts).
 */
export function providerHttp(ctx: HostContext, platform: string, opts: Target): ProviderHttp {
  let clients = httpClients.get(ctx);
  if (!clients) httpClients.set(ctx, (clients = new Map()));
  const key = opts.sandbox ? `sandbox:${opts.profileId}:${platform}` : `live:${platform}`;
  let client = clients.get(key);
  if (!client) clients.set(key, (client = newProviderHttp(ctx, platform, opts)));
  return client;
}
const httpClients = new WeakMap<HostContext, Map<string, ProviderHttp>>();

function newProviderHttp(ctx: HostContext, platform: string, opts: Target): ProviderHttp {
  const plugin = requirePlugin(ctx, platform);
  // The timeout is an operator's choice, so it comes from the environment for sandbox profiles too.
  const timeout = Number(platformSettings(ctx, platform).TIMEOUT_MS);
  return createProviderHttp({
    baseUrl: apiBaseUrl(ctx, plugin, opts),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
    log: ctx.log.child({ component: "provider", platform }),
    classify: plugin.classifyResponse?.bind(plugin),
    now: () => ctx.clock.now(),
    ...(opts.sandbox &&
      ctx.platforms.hasEmulator(platform) && {
        fetch: sandboxFetch(ctx, platform, opts.profileId),
        webSocket: inProcessWebSocket(
          () => ctx.platforms.emulatorFor(platform, opts.profileId),
          sandboxBaseUrl(ctx, platform),
        ),
      }),
  });
}

/**
 * What a connect flow (no account yet) runs with. `lookup` finds the apps a flow registered on a server
 * in stored accounts (server-apps.ts); without it they are kept in this process only.
 */
export function connectContext(
  ctx: HostContext,
  platform: string,
  opts: Target,
  lookup?: StoredAppLookup,
): ConnectContext {
  return {
    http: providerHttp(ctx, platform, opts),
    settings: settingsFor(ctx, platform, opts),
    log: ctx.log.child({ component: "connect", platform }),
    now: () => ctx.clock.now(),
    apps: serverApps(ctx, platform, opts, lookup),
  };
}

export interface ProviderForOptions {
  /** The account's profile is a sandbox profile: every call goes to the emulator. */
  sandbox: boolean;
  /** How the plugin opens media; by default the fetch guard, with own-storage URLs opened directly. */
  media?: MediaAccess;
  ownStorage?: OwnStorageOpener;
  /** Overrides the guard's address rule (tests whose emulators listen on loopback; see createMediaAccess). */
  allowMediaAddress?: (ip: string) => boolean;
}

/**
 * The plugin and its context for one account. Throws when the platform has no plugin or the account has
 * no credentials (disconnected): the engine checks the account's status before calling.
 */
export function providerFor(
  ctx: HostContext,
  account: HostedAccount,
  opts: ProviderForOptions,
): { plugin: Plugin; context: PluginContext } {
  const plugin = requirePlugin(ctx, account.platform);
  if (!account.credentials) throw new Error(`account ${account.id} has no stored credentials`);
  const target: Target = opts.sandbox ? { sandbox: true, profileId: account.profileId } : { sandbox: false };
  const context: PluginContext = {
    http: providerHttp(ctx, account.platform, target),
    account: {
      id: account.id,
      remoteId: account.remoteId,
      username: account.username,
      metadata: account.metadata ?? {},
    },
    credentials: storedCredentials(ctx, account.credentials),
    async saveCredentials(c: Credentials) {
      await ctx.credentials.save(account.id, c);
      context.credentials = c;
    },
    media:
      opts.media ??
      createMediaAccess({
        // A sandbox profile's media may live in its emulators (a blob a workflow carries): opened in process.
        ownStorage: opts.sandbox
          ? firstOpener(opts.ownStorage, sandboxMediaOpener(ctx.platforms, ctx.config.publicUrl, account.profileId))
          : opts.ownStorage,
        maxBytes: maxMediaBytes(ctx),
        log: ctx.log.child({ component: "media-fetch" }),
        allowAddress: opts.allowMediaAddress,
      }),
    settings: settingsFor(ctx, account.platform, target),
    log: ctx.log.child({ component: "plugin", platform: account.platform, account_id: account.id }),
    now: () => ctx.clock.now(),
  };
  return { plugin, context };
}

/**
 * An account's credentials, decrypted once per stored text: the engine needs them for every publish. A
 * refresh stores a new text (a new IV), so an entry is never stale; beyond DECRYPTED_LIMIT texts the least
 * recently used is dropped. Frozen, as they are shared: a plugin that refreshes hands saveCredentials a
 * new object. An entry remembers the key that opened it and counts only while the configuration still
 * has that key (SECRET_KEY or SECRET_KEY_PREVIOUS); `crier secrets rotate` stores new texts.
 */
function storedCredentials(ctx: HostContext, stored: string): Credentials {
  let bySecret = decrypted.get(ctx.config.secretKey);
  if (!bySecret) decrypted.set(ctx.config.secretKey, (bySecret = new Map()));
  let entry = bySecret.get(stored);
  if (entry && (entry.secret === ctx.config.secretKey || entry.secret === ctx.config.secretKeyPrevious)) {
    // Most recently used last, so the first entry is the one to drop.
    bySecret.delete(stored);
  } else {
    const opened = openJson<Credentials>(secretKeys(ctx.config), stored);
    entry = { credentials: deepFreeze(opened.value), secret: opened.secret };
    bySecret.delete(stored);
    if (bySecret.size >= DECRYPTED_LIMIT) bySecret.delete(bySecret.keys().next().value!);
  }
  bySecret.set(stored, entry);
  return entry.credentials;
}
const DECRYPTED_LIMIT = 1_000;
const decrypted = new WeakMap<Buffer, Map<string, { credentials: Credentials; secret: Buffer }>>();

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function maxMediaBytes(ctx: HostContext): number {
  return Math.max(ctx.config.maxImageBytes, ctx.config.maxGifBytes, ctx.config.maxVideoBytes);
}
