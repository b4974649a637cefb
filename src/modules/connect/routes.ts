import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auth } from "../../http/auth.ts";
import { Data, errors } from "../../http/model.ts";
import { ConnectResult, PlatformParams } from "./model.ts";
import * as service from "./service.ts";

/** POST /v1/accounts/connect/{platform} (API) and the OAuth callback. */
export function connectRoutes(ctx: AppContext) {
  return new Elysia({ name: "connect", prefix: "/v1/accounts", detail: { tags: ["Accounts"] } })
    .use(auth(ctx))
    .post(
      "/connect/:platform",
      async ({ principal, params, set }) => {
        const result = await service.startConnect(ctx, principal, params.platform);
        set.status = 201;
        return { data: result };
      },
      {
        scope: "accounts:write",
        params: PlatformParams,
        response: { 201: Data(ConnectResult), ...errors(403, 404, 409) },
        detail: {
          summary: "Start connecting an account",
          description:
            "Computes a browser URL valid five minutes, bound to the key's profile by a signed state; connects nothing by itself. " +
            "OAuth platforms return authorization_url (the provider's page); Bluesky, Telegram, Farcaster and Nostr return hosted_url (a page on this server). " +
            "Extension: Mastodon (mode oauth_authorization_url) returns hosted_url and no authorization_url: its page asks which server, registers Crier there once, and sends the browser on to that server's authorization page. " +
            "404 unsupported_platform for an unknown platform; 409 platform_not_configured when the server lacks the platform's app credentials " +
            "(the hint names the variables); 409 connect_not_available for a platform whose connect flow is not written yet; " +
            "409 sandbox_unavailable when a sandbox profile asks for a platform without an emulator; " +
            "403 account_limit_reached when the profile has as many connected accounts as its limit allows (crier profiles set-limits --accounts; disconnected accounts do not count). " +
            "At the limit a connect still starts for a platform where the profile has an account, so an expired account can be reconnected: reconnecting an account the profile already has never counts twice, " +
            "and a flow that completes with a new account over the limit (or after the limit was reached in the meantime) is refused on its page with the same words. " +
            "Open the URL in a browser, then list accounts. " +
            "For a sandbox profile an authorization_url is this server's /sandbox/{platform}/oauth/authorize, which redirects straight back with a code " +
            "and answers only with the flow's signed state; nothing else under /sandbox/{platform}/ is served (the emulators are reached by the server itself).",
        },
      },
    )
    .get("/callback/:platform", ({ params, query }) => service.finishOAuth(ctx, params.platform, query), {
      params: PlatformParams,
      query: t.Record(t.String(), t.String()),
      detail: {
        summary: "OAuth redirect target",
        description:
          "Opened by the browser when the provider redirects back. Exchanges the code, stores the encrypted credentials, " +
          "creates the account or reactivates the same remote account, and answers a small HTML page. An expired or altered state connects nothing.",
      },
    });
}

/** The hosted pages under /connect/ for form and signer flows. */
export function hostedConnectRoutes(ctx: AppContext) {
  return new Elysia({ name: "connect-hosted", prefix: "/connect", detail: { tags: ["Accounts"], hide: true } })
    .get("/:platform", ({ params, query }) => service.showHostedForm(ctx, params.platform, query.state), {
      params: PlatformParams,
      query: t.Object({ state: t.Optional(t.String()) }, { additionalProperties: true }),
    })
    .post(
      "/:platform",
      ({ params, body }) => service.submitHostedForm(ctx, params.platform, (body ?? {}) as Record<string, unknown>),
      {
        params: PlatformParams,
        parse: "urlencoded",
      },
    );
}
