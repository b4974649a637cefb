/**
 * The registry: every plugin under plugins/ (listed in the generated plugins/index.ts), what the account
 * routes show of each platform, and the sandbox emulators: one instance per platform and sandbox profile.
 */
import { EMULATORS, PLUGINS } from "../../../plugins/index.ts";
import { EXTENSION_PLATFORMS } from "../declaration.ts";
import { pluginForAccount } from "./account-limits.ts";
import type { PlatformDescription, PlatformRegistry } from "./catalog.ts";
import type { ConnectionMode, Emulator, EmulatorOptions, Plugin, PluginStatus } from "../sdk.ts";
import { mediaPuller } from "./media-guard.ts";
import { presentedRequirements } from "./media-plan.ts";
import { videoTools } from "../../media/tools.ts";
import { persistedEmulator, type PersistedEmulator, type SandboxStateStore } from "./sandbox-state.ts";

export type { PlatformRegistry };

export function pluginStatus(p: Plugin): PluginStatus {
  return p.status ?? (p.publish ? "implemented" : "declared_only");
}

export function pluginConnectionMode(p: Plugin): ConnectionMode {
  const mode = p.connect?.mode ?? p.connectionMode;
  if (!mode) throw new Error(`plugin ${p.platform} declares neither connect nor connectionMode`);
  return mode;
}

/**
 * What the account routes show of a platform. Video conversions are declared only where this machine
 * can make them (ffmpeg found): without it, convertible_formats lists the image ones alone.
 */
export function describePlugin(p: Plugin, ffmpeg = true): PlatformDescription {
  return {
    capabilities: {
      connection_mode: pluginConnectionMode(p),
      ...p.capabilities,
      alt_text: p.altText !== null,
      first_comment: p.firstComment !== undefined,
    },
    media_requirements: {
      ...presentedRequirements(p.mediaRequirements, ffmpeg),
      alt_text: p.altText,
      first_comment: p.firstComment
        ? { kind: p.firstComment.kind, max_length: p.firstComment.textLimit.max, unit: p.firstComment.textLimit.unit }
        : null,
    },
    disconnect: p.disconnect,
    status: pluginStatus(p),
  };
}

/** Every target_variant value: the variant names of the plugins that fan one target out (Snapchat). */
export function declaredVariants(plugins: Record<string, Plugin> = PLUGINS): string[] {
  return Object.keys(plugins)
    .sort()
    .flatMap((id) => plugins[id].variantNames ?? []);
}

/**
 * The order platforms are listed in everywhere (the accounts' platform list, the README tables, the
 * dashboard): the upstream API's fifteen first, as before, then Crier's extensions in the order declared.
 */
export function byListingOrder(a: string, b: string): number {
  const ext = (id: string) => (EXTENSION_PLATFORMS as readonly string[]).indexOf(id);
  const [ea, eb] = [ext(a), ext(b)];
  if (ea === -1 && eb === -1) return a < b ? -1 : a > b ? 1 : 0;
  if (ea === -1 || eb === -1) return ea === -1 ? -1 : 1;
  return ea - eb;
}

/** Sandbox emulators a copy keeps in memory at most when their state lives in the store. */
const MAX_PERSISTED_INSTANCES = 256;

export interface RegistryOptions {
  /** Where sandbox emulators keep their state; without it they keep it in memory (tests). */
  sandboxState?: SandboxStateStore;
  /**
   * What each sandbox emulator is created with (sandbox-media.ts: downloads through the media guard,
   * the server's own media from storage). Without it, downloads go through the guard alone.
   */
  emulatorOptions?: (platform: string, profileId: string, registry: PlatformRegistry) => EmulatorOptions;
  /** ffmpeg is installed (videoTools(config).ffmpeg); by default, whether one is on PATH. */
  ffmpeg?: boolean;
  /**
   * Platforms the operator turned off (PLATFORMS_DISABLED): left out as if their folder did not exist, so
   * they are not listed, connected, checked against or published to.
   */
  disabled?: readonly string[];
}

export function createRegistry(
  plugins: Record<string, Plugin> = PLUGINS,
  emulators: Record<string, (opts?: EmulatorOptions) => Emulator> = EMULATORS,
  opts: RegistryOptions = {},
): PlatformRegistry {
  const byId = new Map<string, Plugin>();
  for (const [folder, plugin] of Object.entries(plugins)) {
    if (plugin.platform !== folder)
      throw new Error(
        `plugins/${folder} declares platform "${plugin.platform}"; the folder name must be the platform id`,
      );
    if (plugin.variants && !plugin.variantNames?.length)
      throw new Error(`plugins/${folder} fans targets out with variants() but declares no variantNames`);
    if (!opts.disabled?.includes(folder)) byId.set(folder, plugin);
  }
  const ffmpeg = opts.ffmpeg ?? videoTools().ffmpeg !== null;
  const descriptions = new Map([...byId].map(([id, p]) => [id, describePlugin(p, ffmpeg)]));
  // Own keys only: a path segment such as "__proto__" or "constructor" names no emulator.
  const factory = (platform: string) =>
    byId.has(platform) && Object.hasOwn(emulators, platform) ? emulators[platform] : undefined;
  const guardOnly: EmulatorOptions = { pullMedia: mediaPuller({}) };
  const optionsFor = (platform: string, profileId: string) =>
    opts.emulatorOptions?.(platform, profileId, registry) ?? guardOnly;
  // Keyed by profile, then platform: a sandbox profile's emulators are its own.
  const instances = new Map<string, PersistedEmulator>();
  const emulatorFor = (platform: string, profileId: string) => {
    const make = factory(platform);
    if (!make) return undefined;
    const key = `${profileId} ${platform}`;
    let emu = instances.get(key);
    if (emu) instances.delete(key);
    else {
      emu = opts.sandboxState
        ? persistedEmulator(make(optionsFor(platform, profileId)), opts.sandboxState, profileId)
        : Object.assign(make(optionsFor(platform, profileId)), { sync: async () => {} });
      // State kept in the store comes back on the next call, so the least recently used instance can go;
      // state kept only in memory (tests) cannot.
      if (opts.sandboxState && instances.size >= MAX_PERSISTED_INSTANCES)
        instances.delete(instances.keys().next().value!);
    }
    instances.set(key, emu);
    return emu;
  };
  const registry: PlatformRegistry = {
    describe: (platform) => descriptions.get(platform),
    describeAccount: (platform, metadata) => {
      const plugin = byId.get(platform);
      return plugin?.accountLimits
        ? describePlugin(pluginForAccount(plugin, metadata), ffmpeg)
        : descriptions.get(platform);
    },
    list: () => [...byId.keys()].sort(byListingOrder).map((id) => byId.get(id)!),
    get: (platform) => byId.get(platform),
    statusOf: (platform) => descriptions.get(platform)?.status,
    connectionMode: (platform) =>
      descriptions.get(platform)?.capabilities.connection_mode as ConnectionMode | undefined,
    hasEmulator: (platform) => factory(platform) !== undefined,
    newEmulator: (platform) => factory(platform)?.(),
    emulatorFor,
    async loadEmulator(platform, profileId) {
      const emu = emulatorFor(platform, profileId);
      await emu?.sync();
      return emu;
    },
  };
  return registry;
}
