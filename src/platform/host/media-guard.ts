/**
 * The media fetch guard. Plugins read media through MediaAccess: URLs of the server's own storage are
 * opened directly; anything else is fetched from the internet, never from loopback, private, link-local
 * or cloud-metadata addresses (every address the name resolves to is checked, and every redirect hop),
 * with a byte cap and a deadline enforced while streaming.
 */
import { isIP } from "node:net";
import { checkHost as checkAddresses, type Resolve } from "../address-rule.ts";
import type { Logger } from "../../log.ts";
import { MediaError, type MediaAccess, type MediaBody, type MediaItem } from "../sdk.ts";

/** What the media module offers to recognise and open the server's own public URLs (src/storage). */
export interface OwnStorageOpener {
  openByPublicUrl(
    url: string,
  ): Promise<{ contentType: string; size: number; stream(): ReadableStream<Uint8Array> } | null>;
}

export interface MediaAccessOptions {
  ownStorage?: OwnStorageOpener;
  maxBytes: number;
  /** Deadline for the whole download, headers and body (default 5 minutes). */
  timeoutMs?: number;
  log?: Logger;
  fetch?: typeof fetch;
  /** Resolves a host name to every address it has; defaults to the system resolver. */
  resolve?: Resolve;
  /** Overrides the address rule. Only tests of the caps use it, to serve media from loopback. */
  allowAddress?: (ip: string) => boolean;
}

const MAX_REDIRECTS = 5;

export { isForbiddenAddress, METADATA_HOSTS, systemResolve } from "../address-rule.ts";

function bodyOf(stream: () => ReadableStream<Uint8Array>, contentType: string, size: number | null): MediaBody {
  return {
    contentType,
    size,
    stream,
    async bytes() {
      return new Uint8Array(await new Response(stream()).arrayBuffer());
    },
  };
}

/** Wraps a body so it errors as soon as it passes `max` bytes or the deadline. */
function capped(
  source: ReadableStream<Uint8Array>,
  max: number,
  deadline: number,
  url: string,
  onDone: () => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let total = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const left = deadline - Date.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const next = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new MediaError(`reading ${url} took too long`, true)), Math.max(0, left));
          }),
        ]);
        if (next.done) {
          onDone();
          controller.close();
          return;
        }
        total += next.value.byteLength;
        if (total > max) throw new MediaError(`media at ${url} is larger than ${max} bytes`, false);
        controller.enqueue(next.value);
      } catch (e) {
        onDone();
        reader.cancel().catch(() => {});
        // The open's own deadline aborts the fetch at the same moment: a read cut off by it took too long too.
        const late = Date.now() >= deadline;
        controller.error(
          e instanceof MediaError
            ? e
            : new MediaError(
                late ? `reading ${url} took too long` : `reading ${url} failed: ${(e as Error).message}`,
                true,
              ),
        );
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      onDone();
      return reader.cancel(reason);
    },
  });
}

export function createMediaAccess(opts: MediaAccessOptions): MediaAccess {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 5 * 60_000;

  async function checkHost(url: URL) {
    const checked = await checkAddresses(url.hostname, { resolve: opts.resolve, allowAddress: opts.allowAddress });
    if (!checked.ok) throw new MediaError(`media URL ${url.origin} ${checked.problem}`, checked.transient);
    return checked.address;
  }

  /**
   * Plain HTTP is fetched from the address just checked (with the Host header of the URL), so a name
   * that resolves differently a moment later cannot steer the request inside. HTTPS keeps the name:
   * the certificate must match it, which a rebinding attacker cannot present for an inside service.
   */
  function pinned(url: URL, address: string): { target: URL; headers: Record<string, string> } {
    if (url.protocol !== "http:" || isIP(url.hostname.replace(/^\[|\]$/g, ""))) return { target: url, headers: {} };
    const target = new URL(url);
    target.hostname = isIP(address) === 6 ? `[${address}]` : address;
    return { target, headers: { host: url.host } };
  }

  return {
    async open(item: Pick<MediaItem, "url" | "type">): Promise<MediaBody> {
      const own = await opts.ownStorage?.openByPublicUrl(item.url);
      if (own) {
        if (own.size > opts.maxBytes)
          throw new MediaError(`media ${item.url} is larger than ${opts.maxBytes} bytes`, false);
        return bodyOf(() => own.stream(), own.contentType, own.size);
      }
      let url: URL;
      try {
        url = new URL(item.url);
      } catch {
        throw new MediaError(`media URL ${item.url} is not a valid URL`, false);
      }
      const deadline = Date.now() + timeoutMs;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      const done = () => clearTimeout(timer);
      try {
        for (let hop = 0; ; hop++) {
          if (url.protocol !== "http:" && url.protocol !== "https:")
            throw new MediaError(`media URL ${url.href} is not HTTP or HTTPS`, false);
          const address = await checkHost(url);
          const { target, headers } = pinned(url, address);
          let res: Response;
          try {
            res = await doFetch(target, { redirect: "manual", signal: controller.signal, headers });
          } catch (e) {
            throw new MediaError(
              controller.signal.aborted
                ? `fetching ${url.href} took too long`
                : `fetching ${url.href} failed: ${(e as Error).message}`,
              true,
            );
          }
          if (res.status >= 300 && res.status < 400 && res.headers.get("location")) {
            if (hop >= MAX_REDIRECTS)
              throw new MediaError(`fetching ${item.url} redirected more than ${MAX_REDIRECTS} times`, false);
            url = new URL(res.headers.get("location")!, url);
            await res.body?.cancel();
            continue;
          }
          if (!res.ok || !res.body) {
            await res.body?.cancel();
            throw new MediaError(
              `fetching ${url.href} answered HTTP ${res.status}`,
              res.status >= 500 || res.status === 429,
            );
          }
          const declared = res.headers.get("content-length");
          const size = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
          if (size !== null && size > opts.maxBytes) {
            await res.body.cancel();
            throw new MediaError(
              `media at ${url.href} is ${size} bytes, more than the ${opts.maxBytes} allowed`,
              false,
            );
          }
          const contentType =
            res.headers.get("content-type")?.split(";")[0].trim() ||
            (item.type === "video" ? "video/mp4" : "application/octet-stream");
          const body = res.body;
          // One read of the remote body: a second stream() call would have nothing left to give.
          let used = false;
          const href = url.href;
          return bodyOf(
            () => {
              if (used) throw new MediaError(`media at ${href} was already read`, false);
              used = true;
              return capped(body, opts.maxBytes, deadline, href, done);
            },
            contentType,
            size,
          );
        }
      } catch (e) {
        done();
        throw e;
      }
    },
  };
}

/**
 * The fetch sandbox emulators download media with (EmulatorOptions.pullMedia): the guard, so an emulator
 * given a URL by a sandbox profile reaches neither this host nor the private network, while the
 * server's own media (opened from storage) still work. Refused or failed: it throws, as fetch does.
 */
export function mediaPuller(
  opts: Pick<MediaAccessOptions, "ownStorage" | "allowAddress" | "log"> & { maxBytes?: number },
): (url: string) => Promise<Response> {
  const access = createMediaAccess({ maxBytes: 512 * 1024 * 1024, timeoutMs: 10_000, ...opts });
  return async (url) => {
    const body = await access.open({ url, type: "image" });
    return new Response(body.stream(), {
      headers: {
        "content-type": body.contentType,
        ...(body.size !== null && { "content-length": String(body.size) }),
      },
    });
  };
}
