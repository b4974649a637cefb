/**
 * The facts of Slack's contract the emulator checks on every write call, from each method's reference
 * (docs.slack.dev/reference/methods/<method>, "Arguments" and "Errors", read 2026-11-26). The argument
 * names are held to `@slack/web-api`'s argument types by the compiler (type-only: the package is a
 * development dependency and nothing of it runs), so an argument the SDK does not know fails to compile.
 */
import type {
  ChatPostMessageArguments,
  FilesCompleteUploadExternalArguments,
  FilesGetUploadURLExternalArguments,
} from "@slack/web-api";

/** A call's arguments as they arrive: query and form values are strings, a JSON body keeps its types. */
export type Params = Record<string, unknown>;

/** Every key of every member of a union (keyof of a union keeps only the common ones). */
type KeysOf<T> = T extends unknown ? keyof T : never;
const arg = <T>(name: KeysOf<T> & string) => name;

/** Methods whose reference lists application/json among their content types; the rest read forms only. */
export const JSON_METHODS = new Set([
  "chat.postMessage",
  "files.getUploadURLExternal",
  "files.completeUploadExternal",
  "conversations.join",
]);

/** Slack's refusal of a call: answered HTTP 200 with `{ ok: false, error, ...extra }`. */
export class SlackError extends Error {
  constructor(
    readonly error: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(error);
  }
}

const refuse = (error: string): never => {
  throw new SlackError(error);
};

/** A JSON body sends arrays as arrays; a form sends them as the JSON text of the array. */
function list(v: unknown, error: string): unknown[] | undefined {
  if (v === undefined || v === "") return undefined;
  if (Array.isArray(v)) return v;
  if (typeof v !== "string") return refuse(error);
  try {
    const parsed = JSON.parse(v);
    return Array.isArray(parsed) ? parsed : refuse(error);
  } catch {
    return refuse(error);
  }
}

const CHANNEL = arg<ChatPostMessageArguments>("channel");
const TEXT = arg<ChatPostMessageArguments>("text");
const BLOCKS = arg<ChatPostMessageArguments>("blocks");
const THREAD = arg<ChatPostMessageArguments>("thread_ts");

/**
 * chat.postMessage: `channel` is required (channel_not_found); `text` or `blocks` (or attachments) is
 * required (no_text); `blocks` is at most 50 blocks (invalid_blocks, Block Kit's limit per message).
 */
export function checkPostMessage(p: Params): { channel: string; text: string; thread_ts?: string } {
  const channel = p[CHANNEL];
  if (typeof channel !== "string" || !channel) refuse("channel_not_found");
  const blocks = list(p[BLOCKS], "invalid_blocks");
  if (blocks && (blocks.length > 50 || blocks.some((b) => !b || typeof b !== "object" || !("type" in b))))
    refuse("invalid_blocks");
  const text = p[TEXT];
  if ((typeof text !== "string" || !text.trim()) && !blocks?.length) refuse("no_text");
  const thread = p[THREAD];
  return {
    channel: channel as string,
    text: typeof text === "string" ? text : "",
    ...(typeof thread === "string" && thread && { thread_ts: thread }),
  };
}

const FILENAME = arg<FilesGetUploadURLExternalArguments>("filename");
const LENGTH = arg<FilesGetUploadURLExternalArguments>("length");
const ALT_TEXT = arg<FilesGetUploadURLExternalArguments>("alt_text");
/** The method reference's own name for the description (alt_txt); the SDK's is alt_text. Either is read. */
const ALT_TXT = "alt_txt";

/**
 * files.getUploadURLExternal: `filename` and `length` (bytes, an integer above 0) are required
 * (invalid_arguments; missing_argument "typically only occurs when the length provided is 0"); the
 * description is at most 1,000 characters (alt_txt_too_large).
 */
export function checkUploadUrl(p: Params): { filename: string; length: number; alt?: string } {
  const filename = p[FILENAME];
  if (typeof filename !== "string" || !filename.trim()) refuse("invalid_arguments");
  const raw = p[LENGTH];
  const length = typeof raw === "number" ? raw : Number(raw);
  if (raw === undefined || raw === "") refuse("invalid_arguments");
  if (length === 0) refuse("missing_argument");
  if (!Number.isInteger(length) || length < 0) refuse("invalid_arguments");
  const alt = p[ALT_TXT] ?? p[ALT_TEXT];
  if (alt !== undefined && typeof alt !== "string") refuse("invalid_arguments");
  if (typeof alt === "string" && [...alt].length > 1000) refuse("alt_txt_too_large");
  return { filename: filename as string, length, ...(typeof alt === "string" && alt && { alt }) };
}

const FILES = arg<FilesCompleteUploadExternalArguments>("files");
const CHANNEL_ID = arg<FilesCompleteUploadExternalArguments>("channel_id");
const COMMENT = arg<FilesCompleteUploadExternalArguments>("initial_comment");
const FILE_THREAD = arg<FilesCompleteUploadExternalArguments>("thread_ts");

/**
 * files.completeUploadExternal: `files` is required, an array of `{id, title?}` (in a form, its JSON
 * text); `thread_ts` needs the one channel it replies in (channel_id).
 */
export function checkComplete(p: Params): {
  files: { id: string; title?: string }[];
  channel_id?: string;
  initial_comment?: string;
  thread_ts?: string;
} {
  const files = list(p[FILES], "invalid_arguments");
  if (!files?.length) refuse("invalid_arguments");
  const parsed = files!.map((f) => {
    const o = f as { id?: unknown; title?: unknown };
    if (!o || typeof o.id !== "string") return refuse("invalid_arguments");
    return { id: o.id, ...(typeof o.title === "string" && { title: o.title }) };
  });
  const channel = p[CHANNEL_ID];
  const thread = p[FILE_THREAD];
  if (thread && !channel) refuse("invalid_arguments");
  const comment = p[COMMENT];
  return {
    files: parsed,
    ...(typeof channel === "string" && channel && { channel_id: channel }),
    ...(typeof comment === "string" && comment && { initial_comment: comment }),
    ...(typeof thread === "string" && thread && { thread_ts: thread }),
  };
}
