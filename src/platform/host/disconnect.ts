/**
 * The remote half of disconnecting an account: the plugin's onDisconnect hook (Bluesky ends its session,
 * Telegram's bot leaves the channel), run with the credentials before they are cleared. Best effort: it
 * never fails the disconnect, and it waits a bounded time so a slow platform cannot hold the request.
 */
import { providerFor, type HostContext, type HostedAccount } from "./provider.ts";

const HOOK_WAIT_MS = 5000;

/** What the accounts service knows of the account's surroundings, looked up only when a hook will run. */
export interface DisconnectFacts {
  /** The account's profile is a sandbox profile (the hook talks to the emulator). */
  sandbox: boolean;
  /** Another connected account of the same kind (sandbox or real) has the same remote id. */
  remoteStillUsed: boolean;
}

export async function runDisconnectHook(
  ctx: HostContext,
  row: HostedAccount,
  facts: () => Promise<DisconnectFacts>,
): Promise<void> {
  const plugin = ctx.platforms.get(row.platform);
  if (!plugin?.onDisconnect || !row.credentials) return;
  const log = ctx.log.child({ component: "disconnect", platform: row.platform, account_id: row.id });
  try {
    const { sandbox, remoteStillUsed } = await facts();
    const { context } = providerFor(ctx, row, { sandbox });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      plugin.onDisconnect(context, { remoteStillUsed }),
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          log.warn("remote disconnect still running; not waiting for it");
          resolve();
        }, HOOK_WAIT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
  } catch (e) {
    log.warn("remote disconnect failed", { error: (e as Error).message });
  }
}
