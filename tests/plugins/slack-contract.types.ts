/**
 * Type-level checks of the Slack adapter against Slack's own contract, the argument and response types of
 * `@slack/web-api`. Compiled by `npx tsc --noEmit -p .` (tsconfig includes tests/), not run by bun test:
 * the assignments fail to compile if a request the adapter builds drifts from the method's arguments, and
 * each `@ts-expect-error` line must stay an error, so the build fails if the contract stopped catching a
 * misspelled or misplaced argument. (The adapter reads every answer through the method's response type,
 * plugins/slack/api.ts; the emulator checks the same argument names at runtime, emulator-contract.ts.)
 */
import type {
  ChatPostMessageArguments,
  ChatPostMessageResponse,
  FilesCompleteUploadExternalArguments,
  FilesGetUploadURLExternalArguments,
  FilesGetUploadURLExternalResponse,
  FilesInfoResponse,
  OauthV2AccessResponse,
} from "@slack/web-api";
import { completeArgs, messageArgs, uploadUrlArgs } from "../../plugins/slack/api.ts";

// chat.postMessage: a text message, a thread reply (broadcast or not), Block Kit blocks with the text as fallback.
export const text: ChatPostMessageArguments = messageArgs("C0GENERAL", "hello", { mrkdwn: false });
export const reply: ChatPostMessageArguments = messageArgs("C0GENERAL", "again", {}, "1700000000.000100");
export const broadcast: ChatPostMessageArguments = messageArgs(
  "C0GENERAL",
  "also in the channel",
  { reply_broadcast: true },
  "1700000000.000100",
);
export const blocks: ChatPostMessageArguments = messageArgs("C0GENERAL", "fallback", {
  blocks: [{ type: "section", text: { type: "mrkdwn", text: "*hi*" } }],
});
export const threadOf: string | undefined = reply.thread_ts;

// files.getUploadURLExternal: filename and length, the SDK's alt_text (the reference's alt_txt rides beside it).
const upload = uploadUrlArgs("photo.png", 1234, "a red square");
export const uploadArgs: FilesGetUploadURLExternalArguments = upload;
export const altText: string | undefined = upload.alt_text;

// files.completeUploadExternal: the files shared in the channel, as a thread reply, with the initial comment.
export const complete: FilesCompleteUploadExternalArguments = completeArgs([{ id: "F0ABC" }], "C0GENERAL", "caption");
export const completeInThread: FilesCompleteUploadExternalArguments = completeArgs(
  [{ id: "F0ABC", title: "A title" }],
  "C0GENERAL",
  "",
  "1700000000.000100",
);

// What the adapter reads of the answers exists in the response types under these names.
export const ts: ChatPostMessageResponse["ts"] = "1700000000.000100";
export const warning: ChatPostMessageResponse["warning"] = "message_truncated";
export const uploadUrl: FilesGetUploadURLExternalResponse["upload_url"] = "https://files.slack.com/upload/v1/x";
export const fileId: FilesGetUploadURLExternalResponse["file_id"] = "F0ABC";
export const sharedAt: NonNullable<NonNullable<NonNullable<FilesInfoResponse["file"]>["shares"]>["private"]>[string] = [
  { ts: "1700000000.000100", thread_ts: "1700000000.000001" },
];
export const pickedChannel: NonNullable<OauthV2AccessResponse["incoming_webhook"]>["channel_id"] = "C0GENERAL";

// @ts-expect-error chat.postMessage has no `txt` argument (text is)
export const misspelled: ChatPostMessageArguments = { channel: "C0GENERAL", txt: "x" };
// @ts-expect-error a message needs a channel
export const noChannel: ChatPostMessageArguments = { text: "x" };
// @ts-expect-error reply_broadcast without thread_ts is refused by the contract (only a thread reply can broadcast)
export const broadcastAlone: ChatPostMessageArguments = { channel: "C0GENERAL", text: "x", reply_broadcast: true };
// @ts-expect-error files.getUploadURLExternal needs the length in bytes
export const noLength: FilesGetUploadURLExternalArguments = { filename: "a.png" };
// @ts-expect-error the length is a number of bytes, not a string
export const lengthText: FilesGetUploadURLExternalArguments = { filename: "a.png", length: "12" };
// @ts-expect-error the SDK's contract names the description alt_text; alt_txt (the reference's name) is not in it
export const referenceName: FilesGetUploadURLExternalArguments = { filename: "a.png", length: 1, alt_txt: "x" };
// @ts-expect-error files.completeUploadExternal's files are [{id, title}], not ids
export const fileIds: FilesCompleteUploadExternalArguments = { files: ["F0ABC"], channel_id: "C0GENERAL" };
// @ts-expect-error a thread reply needs the channel it is in
export const threadAlone: FilesCompleteUploadExternalArguments = { files: [{ id: "F0ABC" }], thread_ts: "1.2" };
