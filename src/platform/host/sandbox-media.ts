/**
 * Media that live in a sandbox profile's emulators: URLs under PUBLIC_URL/sandbox/<platform>/ (a Bluesky
 * blob a workflow carries to another platform) are not served to the network, so the media guard, and
 * the emulators' own downloads, open them from the profile's emulator in this process instead.
 */
import { MediaError, type EmulatorOptions } from "../sdk.ts";
import type { PlatformRegistry } from "./catalog.ts";
import { mediaPuller, type OwnStorageOpener } from "./media-guard.ts";

type Opened = Awaited<ReturnType<OwnStorageOpener["openByPublicUrl"]>>;

/**
 * Opens a URL of the profile's emulators, or null for any other URL. `except` is a platform whose
 * emulator is asking: its calls run one at a time, so it must not wait on a call to itself.
 */
export function sandboxMediaOpener(
  platforms: PlatformRegistry,
  publicUrl: string,
  profileId: string,
  except?: string,
): OwnStorageOpener {
  const base = `${publicUrl.replace(/\/+$/, "")}/sandbox/`;
  return {
    async openByPublicUrl(url): Promise<Opened> {
      if (!url.startsWith(base)) return null;
      const parsed = new URL(url);
      const rest = parsed.pathname.slice(new URL(base).pathname.length);
      const slash = rest.indexOf("/");
      const platform = slash === -1 ? rest : rest.slice(0, slash);
      if (platform === except || !platforms.hasEmulator(platform)) return null;
      const emulator = platforms.emulatorFor(platform, profileId)!;
      const res = await emulator.handle(new Request(url), slash === -1 ? "/" : rest.slice(slash));
      if (!res.ok) {
        await res.body?.cancel();
        throw new MediaError(`sandbox media ${url} answered HTTP ${res.status}`, false);
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      return {
        contentType: res.headers.get("content-type")?.split(";")[0].trim() || "application/octet-stream",
        size: bytes.length,
        stream: () => new Response(bytes).body!,
      };
    },
  };
}

/** The first opener that knows the URL. */
export function firstOpener(...openers: (OwnStorageOpener | undefined)[]): OwnStorageOpener {
  return {
    async openByPublicUrl(url) {
      for (const o of openers) {
        const found = await o?.openByPublicUrl(url);
        if (found) return found;
      }
      return null;
    },
  };
}

export interface SandboxMediaOptions {
  /** PUBLIC_URL: where the server's own media and the emulators' URLs live. */
  publicUrl: string;
  /** The server's media storage, opened directly. */
  ownStorage?: OwnStorageOpener;
  /** Overrides the guard's address rule (tests whose media live on loopback). */
  allowAddress?: (ip: string) => boolean;
}

/**
 * What the registry hands each sandbox emulator it creates: downloads through the media guard, with the
 * server's own media opened from storage and the profile's other emulators' media in process.
 */
export function sandboxEmulatorOptions(
  o: SandboxMediaOptions,
): (platform: string, profileId: string, platforms: PlatformRegistry) => EmulatorOptions {
  return (platform, profileId, platforms) => ({
    pullMedia: mediaPuller({
      ownStorage: firstOpener(o.ownStorage, sandboxMediaOpener(platforms, o.publicUrl, profileId, platform)),
      allowAddress: o.allowAddress,
    }),
  });
}
