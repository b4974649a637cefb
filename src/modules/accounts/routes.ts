import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, DataList, errors, Uuid } from "../../http/model.ts";
import { accountsAtRisk, checkAccount } from "./health.ts";
import { Account, AccountAtRisk, AccountCheck, DeleteResult } from "./model.ts";
import * as service from "./service.ts";

export function accountsRoutes(ctx: AppContext) {
  return new Elysia({ name: "accounts", prefix: "/v1/accounts", detail: { tags: ["Accounts"] } })
    .use(auth(ctx))
    .get("", async ({ principal }) => ({ data: await service.listAccounts(ctx, principal.profileId) }), {
      scope: "accounts:read",
      response: { 200: DataList(Account) },
      detail: {
        summary: "List connected accounts",
        description:
          "Every account of the profile, disconnected ones included, in the order they were first connected (oldest first; reconnecting keeps an account's place). Not paged.",
      },
    })
    .get("/at-risk", async ({ principal }) => ({ data: await accountsAtRisk(ctx, principal.profileId) }), {
      scope: "accounts:read",
      response: { 200: DataList(AccountAtRisk) },
      detail: {
        summary: "List accounts that will miss scheduled posts",
        description:
          "Extension: the accounts with scheduled posts that cannot publish them unless connected again: auth_required or disconnected now, or credentials (credentials_expire_at) ending before the first scheduled post is due. " +
          "Earliest first_scheduled_at first. A database read only (no call to any platform), cheap enough to ask on every page load; empty when all is well.",
      },
    })
    .get(
      "/:id/check",
      async ({ principal, params }) => ({ data: await checkAccount(ctx, principal.profileId, params.id) }),
      {
        scope: "accounts:read",
        params: t.Object({ id: Uuid }),
        response: { 200: Data(AccountCheck), ...errors(400, 404) },
        detail: {
          summary: "Check an account with its platform",
          description:
            "Extension: what `crier accounts check` reports, for one account: the platform's cheapest read (never a post) tells whether the token works (refreshing it once when the platform says it expired), " +
            "when it expires, the granted scopes against those each capability needs, and whether the API version is still served. " +
            "It calls the platform, so it costs one or two of the platform's requests: ask on demand, not in a loop. A platform that cannot be reached is token=unreachable, not an error. 404 not_found for another profile's account.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => ({ data: await service.disconnectAccount(ctx, principal.profileId, params.id) }),
      {
        scope: "accounts:write",
        params: t.Object({ id: Uuid }),
        response: { 200: Data(DeleteResult), ...errors(400, 404) },
        detail: {
          summary: "Disconnect an account",
          description:
            "Sets the account disconnected and clears its credentials; posts and history are kept (deleted=false, disconnected=true).",
        },
      },
    );
}
