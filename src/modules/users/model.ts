import { t } from "elysia";
import { SCOPES } from "../../http/scopes.ts";
import { Literals, Uuid } from "../../http/model.ts";

export const SignInBody = t.Object({
  email: t.String({ minLength: 1, maxLength: 320 }),
  password: t.String({ minLength: 1, maxLength: 1000 }),
});

/** The one-time link's token travels in a body, never a path: paths end up in request and proxy logs. */
const LinkToken = t.String({ minLength: 1, maxLength: 200 });
export const LinkLookupBody = t.Object({ token: LinkToken });
export const LinkRedeemBody = t.Object({ token: LinkToken, password: t.String({ maxLength: 1000 }) });

export const SignOutBody = t.Optional(
  t.Object({ everywhere: t.Optional(t.Boolean({ description: "end every session of this user" })) }),
);

export const SwitchProfileBody = t.Object({ profile_id: Uuid });

export const NewProfileBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  sandbox: t.Optional(t.Boolean()),
});

export const NewKeyBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  scopes: t.Array(Literals(SCOPES), { minItems: 1, uniqueItems: true }),
  expires_at: t.Optional(t.Union([t.String({ format: "date-time" }), t.Null()])),
});

export const IdParams = t.Object({ id: Uuid });
