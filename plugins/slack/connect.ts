/**
 * The channel a Slack install connects: the one the installer picked on Slack's consent screen
 * (incoming_webhook.channel_id of oauth.v2.access), with the bot made a member where it may join itself.
 */
import {
  ConnectError,
  type ConnectContext,
  type ConnectedIdentity,
  type FailureOutcome,
} from "../../src/platform/sdk.ts";
import { tokenCredentials } from "../../src/platform/oauth.ts";
import { call, type AuthTestResponse, type ConversationsInfoResponse } from "./api.ts";

/** A connect step's failure as a message for the result page. */
function refused(what: string, outcome: FailureOutcome): ConnectError {
  return new ConnectError(`${what}: ${outcome.reason}`, "code" in outcome ? outcome.code : undefined);
}

/**
 * The identity of the channel the installer picked: the workspace (auth.test), the channel
 * (conversations.info), and the bot made a member where Slack lets it join by itself.
 */
export async function identity(c: ConnectContext, token: Record<string, unknown>): Promise<ConnectedIdentity> {
  const hook = token.incoming_webhook as { channel_id?: string; channel?: string } | undefined;
  if (!hook?.channel_id)
    throw new ConnectError(
      "Slack did not name a channel: the app must ask for the incoming-webhook scope, and a channel must be picked on Slack's consent screen.",
    );
  const access = String(token.access_token);
  const me = await call<AuthTestResponse>(c.http, access, "auth.test", { form: {} });
  if (!me.ok) throw refused("Slack refused the new token", me.outcome);
  const info = await call<ConversationsInfoResponse>(c.http, access, "conversations.info", {
    form: { channel: hook.channel_id, include_num_members: "true" },
  });
  if (!info.ok)
    throw new ConnectError(
      `The app cannot see ${hook.channel ?? hook.channel_id}: invite it to the channel in Slack (/invite @${me.body.user_id}), then connect again. (${info.outcome.reason})`,
      "channel_not_visible",
    );
  const channel = info.body.channel;
  if (!channel?.id || !channel.name) throw new ConnectError("Slack answered conversations.info without the channel.");
  if (channel.is_archived) throw new ConnectError(`#${channel.name} is archived: pick another channel.`, "is_archived");
  if (!channel.is_member) {
    if (channel.is_private)
      throw new ConnectError(
        `Invite the app to the private channel #${channel.name} in Slack (/invite), then connect again: a bot posts only where it is a member.`,
        "not_in_channel",
      );
    const joined = await call(c.http, access, "conversations.join", { json: { channel: channel.id } });
    if (!joined.ok) throw refused(`The app could not join #${channel.name}`, joined.outcome);
  }
  return {
    remoteId: `${me.body.team_id}:${channel.id}`,
    username: `#${channel.name}`,
    avatarUrl: null,
    credentials: tokenCredentials(
      {
        access_token: access,
        ...(typeof token.refresh_token === "string" && { refresh_token: token.refresh_token }),
        ...(typeof token.expires_in === "number" && { expires_in: token.expires_in }),
        ...(typeof token.scope === "string" && { scope: token.scope }),
      },
      c.now(),
    ),
    metadata: {
      channel_id: channel.id,
      channel_name: channel.name,
      private: channel.is_private === true,
      team_id: me.body.team_id,
      team_name: me.body.team,
      team_url: me.body.url,
      bot_user_id: me.body.user_id,
    },
  };
}
