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
    credentials_expire_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description:
        "Extension: when the stored credentials stop working unless renewed (the refresh token's end, or the access token's when there is no refresh token), as the platform said at connect or at the last refresh; null when nothing is known to end. Read from the database: no call to the platform. Crier renews tokens a week ahead where the platform allows; GET /v1/accounts/{id}/check asks the platform.",
    }),
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

const nullableDate = (description: string) => t.Union([t.String({ format: "date-time" }), t.Null()], { description });

export const AccountCheck = t.Object(
  {
    account_id: t.String({ format: "uuid" }),
    platform: t.String(),
    username: t.String(),
    token: t.Union(
      ["valid", "refreshed", "refused", "unreachable", "not_checked"].map((v) => t.Literal(v)),
      {
        description:
          "valid: the platform's cheapest read worked; refreshed: it worked after a token refresh; refused: the platform refused the token (connect again); unreachable: the platform did not answer (try later); not_checked: the platform offers no read to check with.",
      },
    ),
    expires_at: nullableDate("When the stored access token expires, as the platform said; null when it does not say."),
    scopes: t.Object(
      {
        granted: t.Union([t.Array(t.String()), t.Null()], {
          description: "The scopes the token was granted; null when the platform does not report them.",
        }),
        missing: t.Record(t.String(), t.Array(t.String()), {
          description:
            "Per capability (publish, metrics, account_stats, workflow_source, first_comment), the scopes it needs that the token lacks; empty when none are missing or the grant is unknown.",
        }),
      },
      { additionalProperties: false },
    ),
    api_version: t.Union(
      [t.Object({ value: t.String(), accepted: t.Boolean(), note: t.Optional(t.String()) }), t.Null()],
      {
        description:
          "The platform API version Crier speaks and whether the platform still serves it; null when not versioned.",
      },
    ),
    can_publish: t.Boolean({ description: "The token works, has the publish scopes and the API version is served." }),
    problems: t.Array(t.String(), { description: "What stands in the way, each a sentence saying what to do." }),
    checked_at: t.String({ format: "date-time" }),
  },
  {
    title: "AccountCheck",
    description:
      "Extension: the facts of `crier accounts check` for one account, read from the platform now (one or two cheap reads, never a post).",
  },
);

export const AccountAtRisk = t.Object(
  {
    account_id: t.String({ format: "uuid" }),
    platform: t.String(),
    username: t.String(),
    status: AccountStatus,
    credentials_expire_at: nullableDate("When the stored credentials stop working; null when nothing is known to end."),
    first_scheduled_at: t.String({
      format: "date-time",
      description: "When the account's earliest scheduled post is due.",
    }),
    scheduled_posts: t.Integer({ description: "How many posts have a scheduled target on the account." }),
    reason: t.Union([t.Literal("auth_required"), t.Literal("disconnected"), t.Literal("expires_before_due")], {
      description:
        "auth_required or disconnected: the account cannot publish now; expires_before_due: its credentials end before its first scheduled post is due.",
    }),
  },
  {
    title: "AccountAtRisk",
    description:
      "Extension: an account with scheduled posts that will not be able to publish them unless it is connected again.",
  },
);

export type Account = Static<typeof Account>;
export type AccountCheck = Static<typeof AccountCheck>;
export type AccountAtRisk = Static<typeof AccountAtRisk>;
export type DeleteResult = Static<typeof DeleteResult>;
