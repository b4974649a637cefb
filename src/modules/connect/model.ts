import { t, type Static } from "elysia";

export const ConnectResult = t.Object(
  {
    hosted_url: t.Union([t.String(), t.Null()], {
      description:
        "Crier's own page for form and signer flows, and (Extension) for OAuth flows that ask something first: Mastodon's page asks which server.",
    }),
    authorization_url: t.Union([t.String(), t.Null()], {
      description:
        "The provider's authorization URL for OAuth platforms; valid five minutes. null where hosted_url is given instead (Mastodon, whose provider is the server the user names).",
    }),
    mode: t.UnionEnum(["credential_form_url", "managed_signer", "remote_signer", "oauth_authorization_url"]),
    platform: t.String(),
  },
  { title: "ConnectResult" },
);

export type ConnectResult = Static<typeof ConnectResult>;

export const PlatformParams = t.Object({ platform: t.String({ description: "A platform id, e.g. bluesky." }) });
