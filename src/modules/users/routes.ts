import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { clientAddress } from "../../http/client-address.ts";
import { BadRequest, NotFound } from "../../http/errors.ts";
import { checkOrigin, requireSession, sessionCookie } from "../../http/session.ts";
import { createKey, listKeys, revokeKey } from "../keys/service.ts";
import { SignInFailed } from "./errors.ts";
import {
  IdParams,
  LinkParams,
  NewKeyBody,
  NewProfileBody,
  SetPasswordBody,
  SignInBody,
  SignOutBody,
  SwitchProfileBody,
} from "./model.ts";
import * as service from "./service.ts";
import { throttleFor } from "./throttle.ts";

const SESSION_SECONDS = service.SESSION_TTL_MS / 1000;

/**
 * The dashboard's own endpoints under /auth: sign-in, the session, profiles and API keys. Everything else
 * the dashboard shows goes through /v1 like any client (auth.ts accepts the session there). Session
 * calls that change something need the session's CSRF token; sign-in and set-password have no session
 * yet and are checked by Origin instead.
 */
export function usersRoutes(ctx: AppContext) {
  const throttle = throttleFor(ctx);
  const now = () => ctx.clock.now();
  const describe = async (session: service.Session) => ({ data: await service.describeSession(ctx.db, session) });

  return new Elysia({ name: "users", prefix: "/auth", detail: { tags: ["Dashboard"], hide: true } })
    .get("/session", async ({ request }) => describe(await requireSession(ctx, request, { csrf: false })))
    .post(
      "/sign-in",
      async ({ request, body, set }) => {
        checkOrigin(ctx, request);
        const address = clientAddress(request);
        throttle.check(body.email, address, now().getTime());
        const opened = await service.signIn(ctx.db, body.email, body.password, now()).catch((e) => {
          if (e instanceof SignInFailed) throttle.fail(body.email, address, now().getTime());
          throw e;
        });
        set.headers["set-cookie"] = sessionCookie(ctx, opened.token, SESSION_SECONDS);
        return describe({ ...opened.session, sandbox: false });
      },
      { body: SignInBody },
    )
    .post(
      "/sign-out",
      async ({ request, body, set }) => {
        const session = await requireSession(ctx, request);
        await service.endSession(ctx.db, session, body?.everywhere ?? false);
        set.headers["set-cookie"] = sessionCookie(ctx, "", 0);
        return { data: { signed_out: true, everywhere: body?.everywhere ?? false } };
      },
      { body: SignOutBody },
    )
    .get("/links/:token", async ({ params }) => ({ data: await service.describeLink(ctx.db, params.token, now()) }), {
      params: LinkParams,
    })
    .post(
      "/links/:token",
      async ({ request, params, body, set }) => {
        checkOrigin(ctx, request);
        const opened = await service.redeemLink(ctx.db, params.token, body.password, now());
        set.headers["set-cookie"] = sessionCookie(ctx, opened.token, SESSION_SECONDS);
        return describe({ ...opened.session, sandbox: false });
      },
      { params: LinkParams, body: SetPasswordBody },
    )
    .post(
      "/profile",
      async ({ request, body }) =>
        describe(await service.switchProfile(ctx.db, await requireSession(ctx, request), body.profile_id)),
      { body: SwitchProfileBody },
    )
    .post(
      "/profiles",
      async ({ request, body, set }) => {
        const session = await requireSession(ctx, request);
        set.status = 201;
        return describe(await service.addProfile(ctx.db, session, body.name.trim(), body.sandbox ?? false));
      },
      { body: NewProfileBody },
    )
    .get("/keys", async ({ request }) => {
      const session = await requireSession(ctx, request);
      return { data: (await listKeys(ctx.db, session.profileId)).reverse() };
    })
    .post(
      "/keys",
      async ({ request, body, set }) => {
        const session = await requireSession(ctx, request);
        const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
        if (expiresAt && expiresAt <= now())
          throw new BadRequest("validation_error", "body.expires_at: is in the past", "Pick a future expiry, or none.");
        const created = await createKey(ctx.db, {
          name: body.name.trim(),
          profileId: session.profileId,
          scopes: body.scopes,
          expiresAt,
        });
        set.status = 201;
        return { data: created };
      },
      { body: NewKeyBody },
    )
    .delete(
      "/keys/:id",
      async ({ request, params }) => {
        const session = await requireSession(ctx, request);
        const own = await listKeys(ctx.db, session.profileId);
        if (!own.some((k) => k.id === params.id)) throw new NotFound("API key");
        return { data: await revokeKey(ctx.db, params.id, now()) };
      },
      { params: IdParams },
    )
    .get("/platforms", async ({ request }) => {
      await requireSession(ctx, request);
      return { data: platformCatalog(ctx) };
    });
}

/** What the compose and accounts pages need of each plugin: how it connects, counts text and what options it takes. */
function platformCatalog(ctx: AppContext) {
  return ctx.platforms.list().map((p) => ({
    platform: p.platform,
    display_name: p.displayName,
    status: ctx.platforms.statusOf(p.platform) ?? "implemented",
    connection_mode: ctx.platforms.connectionMode(p.platform) ?? null,
    text_limit: p.textLimit,
    options_schema: JSON.parse(JSON.stringify(p.optionsSchema)) as unknown,
  }));
}
