import { t, type Static } from "elysia";
import { ACCOUNT_STATUSES } from "../../domain/enums.ts";
import { Literals } from "../../http/model.ts";
import { Capabilities, MediaRequirements, PlatformEnum } from "../../platform/declaration.ts";

export const AccountStatus = Literals(ACCOUNT_STATUSES);

export const Account = t.Object(
  {
    id: t.String(),
    platform: PlatformEnum,
    username: t.String(),
    avatar_url: t.Union([t.String(), t.Null()]),
    status: AccountStatus,
    capabilities: t.Union([Capabilities, t.Null()]),
    media_requirements: t.Union([MediaRequirements, t.Null()]),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Account" },
);

export const DeleteResult = t.Object(
  {
    deleted: t.Boolean(),
    id: t.String(),
    disconnected: t.Optional(t.Boolean({ description: "true when an account was disconnected rather than deleted" })),
    provider_revocation_required: t.Union([t.Boolean(), t.Null()]),
    provider_revocation_url: t.Union([t.String(), t.Null()]),
    message: t.Union([t.String(), t.Null()]),
  },
  { title: "DeleteResult" },
);

export type Account = Static<typeof Account>;
export type DeleteResult = Static<typeof DeleteResult>;
