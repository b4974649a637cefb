import { chmodSync, existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { AppContext } from "../context.ts";
import { adminCommands, type AdminCommand } from "./commands.ts";

/**
 * The local admin socket: while `crier serve` holds the embedded database, `crier profiles|keys ...`
 * run their command inside the server through this owner-only Unix socket in DATA_DIR.
 */
export const socketPath = (dataDir: string) => join(dataDir, "admin.sock");

export function startAdminSocket(dataDir: string, ctx: AppContext) {
  const path = socketPath(dataDir);
  if (existsSync(path)) unlinkSync(path);
  const server = Bun.serve({
    unix: path,
    // A backup answers only once its archive is written, which may take minutes; the socket is the owner's
    // alone. (Bun's types leave idleTimeout out of a unix socket's options; its server applies it all the same.)
    ...({ idleTimeout: 0 } as object),
    async fetch(req) {
      if (req.method !== "POST") return new Response("method not allowed", { status: 405 });
      const { command, args } = (await req.json()) as { command: AdminCommand; args: Record<string, unknown> };
      const run = adminCommands[command];
      if (!run) return Response.json({ error: `unknown admin command ${command}` }, { status: 400 });
      try {
        return Response.json({ result: await run(ctx, args as never) });
      } catch (e) {
        return Response.json({ error: (e as Error).message }, { status: 400 });
      }
    },
  });
  chmodSync(path, 0o600);
  return {
    stop() {
      server.stop(true);
      try {
        unlinkSync(path);
      } catch {
        /* gone */
      }
    },
  };
}

/** Runs an admin command in the running server; null when no server answers on the socket. */
export async function callAdminSocket(
  dataDir: string,
  command: AdminCommand,
  args: object,
): Promise<{ result?: unknown; error?: string } | null> {
  const path = socketPath(dataDir);
  if (!existsSync(path)) return null;
  try {
    const res = await fetch("http://localhost/rpc", {
      method: "POST",
      unix: path,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ command, args }),
      timeout: false,
    } as RequestInit);
    return (await res.json()) as { result?: unknown; error?: string };
  } catch {
    return null;
  }
}
