import type { AppContext } from "../../src/context.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";

/**
 * A Bluesky account as the database holds it once connected, with placeholder tokens: for tests of claims,
 * results and requests that never call the platform (engine-kit's `bluesky()` connects a real one).
 */
export async function storedBlueskyAccount(ctx: AppContext, profileId: string, name: string): Promise<string> {
  const row = await upsertConnectedAccount(ctx, {
    profileId,
    platform: "bluesky",
    remoteId: `did:plc:${name}`,
    username: `${name}.test`,
    credentials: { accessJwt: "a", refreshJwt: "r" },
  });
  return row.id;
}
