import { t } from "elysia";
import { SCOPES } from "../../http/scopes.ts";
import { Literals, Uuid } from "../../http/model.ts";

export const SignInBody = t.Object({
  email: t.String({ minLength: 1, maxLength: 320 }),
  password: t.String({ minLength: 1, maxLength: 1000 }),
});

export const SetPasswordBody = t.Object({ password: t.String({ maxLength: 1000 }) });

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

export const LinkParams = t.Object({ token: t.String({ minLength: 1, maxLength: 200 }) });
export const IdParams = t.Object({ id: Uuid });
