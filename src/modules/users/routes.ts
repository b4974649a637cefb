import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { clientAddress } from "../../http/client-address.ts";
import { BadRequest, NotFound } from "../../http/errors.ts";
import { checkOrigin, requireSession, sessionCookie } from "../../http/session.ts";
import { createKey, listKeys, revokeKey } from "../keys/service.ts";
import { SignInFailed } from "./errors.ts";
import { deviceCookie, knownDevice } from "./device.ts";
import {
  IdParams,
  LinkLookupBody,
  LinkRedeemBody,
  NewKeyBody,
  NewProfileBody,
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
  /** The session cookie, and the device cookie that keeps this browser apart in the sign-in throttle. */
  const signedIn = (request: Request, email: string, token: string) => [
    sessionCookie(ctx, token, SESSION_SECONDS),
    deviceCookie(ctx, email, knownDevice(ctx, request, email)),
  ];

  return new Elysia({ name: "users", prefix: "/auth", detail: { tags: ["Dashboard"], hide: true } })
    .get("/session", async ({ request }) => describe(await requireSession(ctx, request, { csrf: false })))
    .post(
      "/sign-in",
      async ({ request, body, set }) => {
        checkOrigin(ctx, request);
        // Taken before the slow password check and kept only when the password was wrong.
        const attempt = throttle.reserve(
          body.email,
          clientAddress(request),
          knownDevice(ctx, request, body.email),
          now().getTime(),
        );
        const opened = await service.signIn(ctx.db, body.email, body.password, now()).catch((e) => {
          if (!(e instanceof SignInFailed)) attempt.refund();
          throw e;
        });
        attempt.refund();
        const described = await describe({ ...opened.session, sandbox: false });
        set.headers["set-cookie"] = signedIn(request, described.data.user.email, opened.token) as unknown as string;
        return described;
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
    .post("/links/lookup", async ({ body }) => ({ data: await service.describeLink(ctx.db, body.token, now()) }), {
      body: LinkLookupBody,
    })
    .post(
      "/links/redeem",
      async ({ request, body, set }) => {
        checkOrigin(ctx, request);
        const opened = await service.redeemLink(ctx.db, body.token, body.password, now());
        const described = await describe({ ...opened.session, sandbox: false });
        set.headers["set-cookie"] = signedIn(request, described.data.user.email, opened.token) as unknown as string;
        return described;
      },
      { body: LinkRedeemBody },
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
