/**
 * The remote half of disconnecting an account: the plugin's onDisconnect hook (Bluesky ends its session,
 * Telegram's bot leaves the channel), run with the credentials before they are cleared. Best effort: it
 * never fails the disconnect, and it waits a bounded time so a slow platform cannot hold the request.
 */
import { and, eq, ne, sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { accounts, profiles } from "../db/schema.ts";
import { providerFor } from "./provider.ts";

const HOOK_WAIT_MS = 5000;

type AccountRow = typeof accounts.$inferSelect;

export async function runDisconnectHook(ctx: AppContext, row: AccountRow): Promise<void> {
  const plugin = ctx.platforms.get(row.platform);
  if (!plugin?.onDisconnect || !row.credentials) return;
  const log = ctx.log.child({ component: "disconnect", platform: row.platform, account_id: row.id });
  try {
    const [profile] = await ctx.db.db.select({ sandbox: profiles.sandbox }).from(profiles).where(eq(profiles.id, row.profileId));
    const sandbox = profile?.sandbox ?? false;
    // "Still used" counts connected accounts of any profile of the same kind (sandbox or real) on that remote.
    const [{ n }] = await ctx.db.db
      .select({ n: sql<number>`count(*)::int` })
      .from(accounts)
      .innerJoin(profiles, eq(profiles.id, accounts.profileId))
      .where(and(
        eq(accounts.platform, row.platform), eq(accounts.remoteId, row.remoteId), ne(accounts.id, row.id),
        ne(accounts.status, "disconnected"), eq(profiles.sandbox, sandbox),
      ));
    const { context } = providerFor(ctx, row, { sandbox });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      plugin.onDisconnect(context, { remoteStillUsed: n > 0 }),
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
