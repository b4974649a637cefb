/**
 * A WebSocket class whose connections go straight to an emulator in this process: what sandbox profiles
 * of WebSocket platforms (Nostr relays) use instead of leaving the process through PUBLIC_URL. It keeps
 * the browser API's shape (readyState, on* handlers, asynchronous delivery) that clients rely on.
 */
import type { Emulator } from "../sdk.ts";

type Handler<E> = ((ev: E) => void) | null;

export function inProcessWebSocket(emulatorFor: () => Emulator | undefined, prefix: string): typeof WebSocket {
  class InProcessWebSocket {
    static readonly CONNECTING = 0;
    static readonly OPEN = 1;
    static readonly CLOSING = 2;
    static readonly CLOSED = 3;
    readonly CONNECTING = 0;
    readonly OPEN = 1;
    readonly CLOSING = 2;
    readonly CLOSED = 3;
    readyState = 0;
    readonly url: string;
    onopen: Handler<Event> = null;
    onmessage: Handler<MessageEvent> = null;
    onclose: Handler<CloseEvent> = null;
    onerror: Handler<Event> = null;
    private session: { message(data: string): void; close(): void } | null = null;

    constructor(url: string | URL) {
      this.url = String(url);
      setTimeout(() => this.open(), 0);
    }

    private open() {
      const emulator = emulatorFor();
      const { pathname } = new URL(this.url);
      const base = new URL(prefix).pathname;
      if (!emulator?.openSocket || !pathname.startsWith(base)) {
        this.readyState = 3;
        this.onerror?.(new Event("error"));
        this.onclose?.({ code: 1006, reason: "no emulator at this address" } as CloseEvent);
        return;
      }
      this.session = emulator.openSocket(pathname.slice(base.length) || "/", (data) => {
        if (this.readyState !== 1) return;
        setTimeout(() => this.onmessage?.({ data } as MessageEvent), 0);
      });
      this.readyState = 1;
      this.onopen?.(new Event("open"));
    }

    send(data: string) {
      // As in browsers: an error while connecting, silently dropped once closing or closed.
      if (this.readyState === 0) throw new Error("WebSocket is still connecting");
      if (this.readyState !== 1) return;
      const session = this.session!;
      setTimeout(() => session.message(String(data)), 0);
    }

    close() {
      if (this.readyState >= 2) return;
      this.readyState = 3;
      this.session?.close();
      setTimeout(() => this.onclose?.({ code: 1000, reason: "" } as CloseEvent), 0);
    }
  }
  return InProcessWebSocket as unknown as typeof WebSocket;
}
