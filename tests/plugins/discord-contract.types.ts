/**
 * Type-level checks of the Discord adapter against Discord's own contract, discord-api-types (v10).
 * Compiled by `npx tsc --noEmit -p .` (tsconfig includes tests/), not run by bun test: the bodies the
 * adapter's builders make must be the contract's request types, and each `@ts-expect-error` line must
 * stay an error, so the build fails if the contract stopped catching a misspelled or invented field.
 * (The emulator checks its error codes, permission bits and channel types against the package at runtime.)
 */
import type {
  APIMessage,
  RESTPostAPIChannelMessageJSONBody,
  RESTPostAPIWebhookWithTokenJSONBody,
  RESTPostAPIWebhookWithTokenQuery,
} from "discord-api-types/v10";
import { channelMessageBody, webhookMessageBody } from "../../plugins/discord/api.ts";

const parts = {
  content: "Release notes",
  embeds: [{ title: "v2.0", color: 0x5865f2, fields: [{ name: "a", value: "b", inline: true }] }],
  attachments: [{ filename: "file0.png", description: "alt text" }],
  silent: true,
};
// A bot's create message, with its nonce, enforce_nonce and reply.
export const botBody: RESTPostAPIChannelMessageJSONBody = channelMessageBody(parts, {
  nonce: "0123456789abcdef012345678",
  replyTo: { messageId: "1", channelId: "2" },
});
export const nonce: RESTPostAPIChannelMessageJSONBody["nonce"] = botBody.nonce;
export const reference: RESTPostAPIChannelMessageJSONBody["message_reference"] = botBody.message_reference;
// An incoming webhook's execute body, and the query the adapter sends with it.
export const hookBody: RESTPostAPIWebhookWithTokenJSONBody = webhookMessageBody(parts);
export const hookQuery: RESTPostAPIWebhookWithTokenQuery = { wait: true };
// What the adapter reads of the answer is there under the contract's names.
export const answer = (m: APIMessage) => [
  m.id,
  m.channel_id,
  m.timestamp,
  m.content,
  m.attachments[0]?.description,
  m.reactions?.[0]?.count,
];

// @ts-expect-error a webhook's execute takes no nonce
export const hookNonce: RESTPostAPIWebhookWithTokenJSONBody = { content: "x", nonce: "1" };
// @ts-expect-error enforce_nonce is a boolean
export const badEnforce: RESTPostAPIChannelMessageJSONBody = { enforce_nonce: "yes" };
// @ts-expect-error an attachment's alt text is its description, not alt_text
export const badAlt: RESTPostAPIChannelMessageJSONBody = { attachments: [{ id: 0, alt_text: "x" }] };
// @ts-expect-error a reply is message_reference, not reply_to
export const badReply: RESTPostAPIChannelMessageJSONBody = { reply_to: "1" };
