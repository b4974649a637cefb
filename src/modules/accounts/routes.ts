import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, DataList, errors, Uuid } from "../../http/model.ts";
import { Account, DeleteResult } from "./model.ts";
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
