/**
 * Slack's OAuth v2 as the emulator serves it (docs.slack.dev/authentication/installing-with-oauth and
 * reference/methods/oauth.v2.access, read 2026-11-26): the consent, whose incoming-webhook channel picker
 * gives the code a channel, and oauth.v2.access, answering Slack's fields around the token (`ok`, `team`,
 * `bot_user_id`, `incoming_webhook` for a code) and `{ ok: false, error }` for a refused one. The sandbox
 * app has token rotation on: 12-hour `xoxe.xoxb-` tokens and single-use `xoxe-` refresh tokens.
 */
import { randomBytes } from "node:crypto";
import type { WebAPICallResult } from "@slack/web-api";
import { OAuthServer } from "../../src/platform/emulator-kit.ts";
import { SlackError } from "./emulator-contract.ts";

export const TEAM = { id: "T0SANDBOX", name: "Sandbox Workspace", url: "https://sandbox-workspace.slack.com/" };
export const BOT = { user_id: "U0CRIERBOT", bot_id: "B0CRIERBOT", app_id: "A0CRIER" };
/** What the sandbox app may be granted: the plugin's scopes and chat:write.public. */
export const ALL_SCOPES = [
  "chat:write",
  "chat:write.public",
  "files:write",
  "files:read",
  "channels:join",
  "channels:read",
  "groups:read",
  "channels:history",
  "groups:history",
  "incoming-webhook",
];
/** Token rotation: access tokens last 12 hours (docs.slack.dev/authentication/using-token-rotation). */
const ACCESS_TTL_S = 43_200;

export interface Channel {
  id: string;
  name: string;
  is_private: boolean;
  is_member: boolean;
  is_archived: boolean;
  num_members: number;
}

export const ok = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  Response.json({ ok: true, ...body }, { headers });
/** A successful answer, its body held to the method's response type in `@slack/web-api`. */
export const answer = <T extends WebAPICallResult>(body: T, headers: Record<string, string> = {}) =>
  Response.json(body, { headers });
export const fail = (error: string, extra: Record<string, unknown> = {}) =>
  Response.json({ ok: false, error, ...extra });

/** What the OAuth side reads of the emulator's state: the workspace's channels and the picker's choice. */
export interface PickerState {
  channels: Record<string, Channel>;
  picked: string;
  codeChannel: Map<string, string>;
}

export function slackOAuth(state: PickerState) {
  const oauth = new OAuthServer({
    clientAuth: "basic",
    accessTtlS: ACCESS_TTL_S,
    refresh: "rotating",
    newToken: (kind) =>
      kind === "access"
        ? `xoxe.xoxb-1-${randomBytes(18).toString("base64url")}`
        : `xoxe-1-${randomBytes(24).toString("base64url")}`,
    grantable: ALL_SCOPES,
    scopeSeparator: ",",
    answer: { token_type: "bot" },
    refuse: (why) =>
      fail(
        {
          invalid_client: "invalid_client_id",
          invalid_code: "invalid_code",
          redirect_mismatch: "bad_redirect_uri",
          verifier_mismatch: "invalid_code_verifier",
          invalid_refresh_token: "invalid_refresh_token",
          unsupported_grant_type: "invalid_grant_type",
        }[why],
      ),
  });
  /** The consent: Slack's picker gives the code the channel chosen (the one a test picked). */
  function authorize(url: URL): Response {
    const res = oauth.authorize(url, () => new SlackError("invalid_client_id"));
    const code = new URL(res.headers.get("location")!).searchParams.get("code");
    if (code) state.codeChannel.set(code, state.picked);
    return res;
  }

  /** oauth.v2.access: the OAuth answer with Slack's fields around it, and the picked channel. */
  async function token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.clone().text());
    const res = await oauth.token(req);
    const body = (await res.json()) as Record<string, unknown>;
    if (body.ok === false) return Response.json(body);
    const code = form.get("code");
    const channel = state.channels[(code && state.codeChannel.get(code)) || state.picked];
    return ok({
      ...body,
      bot_user_id: BOT.user_id,
      app_id: BOT.app_id,
      team: { id: TEAM.id, name: TEAM.name },
      enterprise: null,
      is_enterprise_install: false,
      ...(form.get("grant_type") === "authorization_code" && {
        authed_user: { id: "U0INSTALLER" },
        incoming_webhook: {
          channel: `#${channel.name}`,
          channel_id: channel.id,
          configuration_url: `${TEAM.url}services/B0HOOK`,
          url: `https://hooks.slack.com/services/${TEAM.id}/B0HOOK/${randomBytes(12).toString("hex")}`,
        },
      }),
    });
  }

  return { oauth, authorize, token };
}
