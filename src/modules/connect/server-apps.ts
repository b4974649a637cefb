/**
 * Where a connect flow finds an app it registered on a server after a restart (src/platform/host/
 * server-apps.ts): in the encrypted credentials of the latest account connected through it, whose
 * metadata names the server. A sandbox profile's apps live in its own emulator, so only its own accounts
 * count; a live flow looks at live profiles' accounts only.
 */
import { and, desc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { secretKeys } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import { decryptJson } from "../../db/crypto.ts";
import { accounts, profiles } from "../../db/schema.ts";
import type { StoredAppLookup } from "../../platform/host/server-apps.ts";
import type { Credentials } from "../../platform/sdk.ts";
import { errorFields } from "../../log.ts";

export function storedApp(ctx: AppContext): StoredAppLookup {
  return async (platform, target, server) => {
    const scope = target.sandbox
      ? eq(accounts.profileId, target.profileId)
      : inArray(
          accounts.profileId,
          ctx.db.db.select({ id: profiles.id }).from(profiles).where(eq(profiles.sandbox, false)),
        );
    const [row] = await ctx.db.db
      .select({ credentials: accounts.credentials })
      .from(accounts)
      .where(
        and(
          eq(accounts.platform, platform),
          isNotNull(accounts.credentials),
          sql`lower(${accounts.metadata}->>'server') = ${server}`,
          scope,
        ),
      )
      .orderBy(desc(accounts.updatedAt))
      .limit(1);
    if (!row?.credentials) return null;
    try {
      const app = decryptJson<Credentials>(secretKeys(ctx.config), row.credentials).app;
      return app && typeof app === "object" ? (app as Credentials) : null;
    } catch (e) {
      // A credential no key opens is reported by `crier secrets rotate`; here the app is registered anew.
      ctx.log.warn("stored app unreadable", { platform, ...errorFields(e) });
      return null;
    }
  };
}
