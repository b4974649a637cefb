/**
 * A TCP proxy on 127.0.0.1 in front of PostgreSQL that a test can freeze: while frozen it accepts
 * connections and keeps every socket open but forwards no byte either way, the way a hung server or a
 * dropped route looks to a client (nothing is refused, nothing answers). Resuming forwards what waited,
 * or drops the connections it held.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface FreezableProxy {
  /** `target` with its host and port replaced by the proxy's. */
  url: string;
  freeze(): void;
  /**
   * Forwards again. With `reset`, the connections that were frozen are closed instead, and what waited in
   * them is lost (a server that restarted, a route that came back on another path); new ones work.
   */
  resume(opts?: { reset?: boolean }): void;
  stop(): Promise<void>;
}

export async function freezableProxy(target: string): Promise<FreezableProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let frozen = false;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
    // Paused sockets read nothing: the bytes wait in the kernel's buffers until resume.
    if (frozen) s.pause();
  };
  const server: Server = createServer((client) => {
    const server = createConnection({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    track(client);
    track(server);
    // Not pipe(): it resumes a paused source by itself once the destination drains.
    client.on("data", (chunk) => server.write(chunk));
    server.on("data", (chunk) => client.write(chunk));
    client.on("close", () => server.destroy());
    server.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    freeze() {
      frozen = true;
      for (const s of sockets) s.pause();
    },
    resume(opts) {
      frozen = false;
      for (const s of sockets) opts?.reset ? s.destroy() : s.resume();
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
