/**
 * An emulator of the Slack Web API surface the plugin uses, written from Slack's method reference
 * (docs.slack.dev/reference/methods/<method>, read 2026-11-26): the OAuth v2 consent with its channel
 * picker (incoming-webhook) and oauth.v2.access (the client by HTTP Basic; token rotation: 12-hour
 * `xoxe.xoxb-` tokens and single-use `xoxe-` refresh tokens), auth.test, conversations.list/info/join/
 * history/replies, chat.postMessage, files.getUploadURLExternal, the upload URL (served here), files.
 * completeUploadExternal and files.info. Every refusal is Slack's HTTP 200 `{ ok: false,
 * error }` (missing_scope with `needed` and `provided`); a rate limit is HTTP 429 with Retry-After.
 * Request facts are checked at runtime against the same names `@slack/web-api` types (emulator-contract.ts).
 *
 * Sandbox rule: client "sandbox"/"sandbox"; the workspace "Sandbox Workspace" has #general and
 * #announcements (public) and #private-team (private, the bot invited); the consent picks #general
 * unless a test picks another.
 */
import { randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  addCounts,
  emulatorState,
  failingHandler,
  FailurePlan,
  mountBase,
  resettable,
} from "../../src/platform/emulator-kit.ts";
import { inspectMedia } from "../../src/platform/emulator-media.ts";
// The answers are held to the contract's response types (type-only: nothing of the package runs).
import type {
  AuthTestResponse,
  ChatPostMessageResponse,
  ConversationsHistoryResponse,
  ConversationsInfoResponse,
  ConversationsJoinResponse,
  ConversationsListResponse,
  ConversationsRepliesResponse,
  FilesCompleteUploadExternalResponse,
  FilesGetUploadURLExternalResponse,
  FilesInfoResponse,
} from "@slack/web-api";

import { answer, BOT, fail, slackOAuth, TEAM, type Channel } from "./emulator-oauth.ts";
import { shapes, type Message, type Upload } from "./emulator-shapes.ts";
import {
  checkComplete,
  checkPostMessage,
  checkUploadUrl,
  JSON_METHODS,
  SlackError,
  type Params,
} from "./emulator-contract.ts";

export interface SlackEmulator extends Emulator {
  /** The channel the next consents pick (Slack's picker), by id. */
  pickChannel(id: string): void;
  /** A channel the workspace has, for tests to change (membership, archive). */
  channel(id: string): Channel;
  /** Reactions and replies people added on Slack. */
  engage(ts: string, counts: { reactions?: number; replies?: number }): void;
  /** Sets every channel's member count (conversations.info num_members). */
  setFollowers(count: number): void;
  /** The files the emulator received, with what Slack stored about them. */
  files(): { id: string; name: string; alt?: string; size: number; mime: string | null }[];
}

/** A Slack message timestamp: seconds and a six-digit sequence, unique per channel. */
function newTs(last: { n: number }): string {
  last.n += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(last.n).padStart(6, "0")}`;
}

export function createSlackEmulator(): SlackEmulator {
  const failures = new FailurePlan();
  const channels = (): Record<string, Channel> => ({
    C0GENERAL: {
      id: "C0GENERAL",
      name: "general",
      is_private: false,
      is_member: false,
      is_archived: false,
      num_members: 12,
    },
    C0ANNOUNCE: {
      id: "C0ANNOUNCE",
      name: "announcements",
      is_private: false,
      is_member: false,
      is_archived: false,
      num_members: 40,
    },
    G0PRIVATE: {
      id: "G0PRIVATE",
      name: "private-team",
      is_private: true,
      is_member: true,
      is_archived: false,
      num_members: 4,
    },
  });
  const state = resettable(() => ({
    channels: channels(),
    picked: "C0GENERAL",
    /** The channel each consent's code picked. */
    codeChannel: new Map<string, string>(),
    uploads: new Map<string, Upload>(),
    messages: [] as Message[],
    emulated: [] as EmulatedPost[],
    seq: { n: 0 },
  }));
  const { oauth, authorize, token } = slackOAuth(state);
  const { channelJson, fileJson, messageJson } = shapes(state);

  /** The params of a call: the query, then the form or (for methods that take it) the JSON body. */
  async function params(req: Request, method: string, url: URL): Promise<Params> {
    const out: Params = Object.fromEntries(url.searchParams);
    const type = req.headers.get("content-type") ?? "";
    const text = await req.text();
    if (type.includes("application/json")) {
      // Reading methods take no JSON body: Slack reads form or query arguments only ("Content types").
      if (!JSON_METHODS.has(method)) return out;
      try {
        Object.assign(out, JSON.parse(text || "{}"));
      } catch {
        throw new SlackError("invalid_json");
      }
    } else if (text) Object.assign(out, Object.fromEntries(new URLSearchParams(text)));
    return out;
  }

  function authed(req: Request): void {
    if (oauth.bearer(req)) return;
    const presented = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
    if (!presented) throw new SlackError("not_authed");
    throw new SlackError(presented.startsWith("xoxe.") ? "token_expired" : "invalid_auth");
  }

  function need(req: Request, ...anyOf: string[]): void {
    if (anyOf.some((s) => oauth.granted(req, s))) return;
    throw new SlackError("missing_scope", { needed: anyOf.join(","), provided: oauth.scopesOf(req).join(",") });
  }

  function channelFor(id: unknown): Channel {
    const c = typeof id === "string" ? state.channels[id] : undefined;
    if (!c) throw new SlackError("channel_not_found");
    return c;
  }

  /** A private channel is invisible to a bot that is not in it (channel_not_found), as Slack answers. */
  function visible(req: Request, id: unknown): Channel {
    const c = channelFor(id);
    if (c.is_private && !c.is_member) throw new SlackError("channel_not_found");
    need(req, c.is_private ? "groups:read" : "channels:read");
    return c;
  }

  function postable(req: Request, c: Channel): void {
    if (c.is_archived) throw new SlackError("is_archived");
    if (c.is_member) return;
    // chat:write.public posts in public channels the bot is not in (docs.slack.dev/reference/scopes/chat.write.public).
    if (c.is_private || !oauth.granted(req, "chat:write.public")) throw new SlackError("not_in_channel");
  }

  function record(channel: string, text: string, thread: string | undefined, files: Upload[]): Message {
    let root: Message | undefined;
    if (thread) {
      const parent = state.messages.find((m) => m.channel === channel && m.ts === thread);
      root = parent?.thread_ts
        ? state.messages.find((m) => m.channel === channel && m.ts === parent.thread_ts)
        : parent;
      if (root) root.reply_count += 1;
    }
    const m: Message = {
      ts: newTs(state.seq),
      channel,
      text,
      ...(thread && { thread_ts: root?.ts ?? thread }),
      files: files.map((f) => f.id),
      reply_count: 0,
      reactions: 0,
    };
    state.messages.push(m);
    state.emulated.push({
      id: m.ts,
      text,
      media: files.map((f) => ({
        type: f.mime?.startsWith("video/") ? "video" : f.mime?.startsWith("image/") ? "image" : "file",
        ...(f.mime && { contentType: f.mime }),
        size: f.length,
        ...(f.alt && { alt: f.alt }),
      })),
      replyTo: m.thread_ts ?? null,
      createdAt: new Date(),
    });
    return m;
  }

  async function api(req: Request, method: string, url: URL, base: string): Promise<Response> {
    const p = await params(req, method, url);
    authed(req);
    const scopes = { "x-oauth-scopes": oauth.scopesOf(req).join(",") };
    switch (method) {
      case "auth.test":
        return answer<AuthTestResponse>(
          { ok: true, url: TEAM.url, team: TEAM.name, user: "crier", team_id: TEAM.id, ...BOT },
          scopes,
        );
      case "conversations.list": {
        const types = String(p.types ?? "public_channel").split(",");
        if (types.includes("public_channel")) need(req, "channels:read");
        if (types.includes("private_channel")) need(req, "groups:read");
        const list = Object.values(state.channels).filter(
          (c) =>
            (c.is_private ? types.includes("private_channel") && c.is_member : types.includes("public_channel")) &&
            !(p.exclude_archived === "true" && c.is_archived),
        );
        return answer<ConversationsListResponse>({
          ok: true,
          channels: list.map((c) => channelJson(c, false)),
          response_metadata: { next_cursor: "" },
        });
      }
      case "conversations.info": {
        const c = visible(req, p.channel);
        return answer<ConversationsInfoResponse>({
          ok: true,
          channel: channelJson(c, String(p.include_num_members) === "true"),
        });
      }
      case "conversations.join": {
        need(req, "channels:join");
        const c = channelFor(p.channel);
        if (c.is_private) throw new SlackError("method_not_supported_for_channel_type");
        if (c.is_archived) throw new SlackError("is_archived");
        c.is_member = true;
        return answer<ConversationsJoinResponse>({ ok: true, channel: channelJson(c, false) });
      }
      case "conversations.history": {
        const c = channelFor(p.channel);
        need(req, c.is_private ? "groups:history" : "channels:history");
        if (!c.is_member) throw new SlackError("not_in_channel");
        // oldest and latest bound the listing, each excluded unless inclusive is true.
        const oldest = Number(p.oldest ?? 0);
        const latest = p.latest === undefined ? Infinity : Number(p.latest);
        const inclusive = String(p.inclusive) === "true" || String(p.inclusive) === "1";
        const within = (ts: number) => (inclusive ? ts >= oldest && ts <= latest : ts > oldest && ts < latest);
        const limit = Math.min(Number(p.limit ?? 100) || 100, 999);
        const top = state.messages
          .filter((m) => m.channel === c.id && (!m.thread_ts || m.thread_ts === m.ts) && within(Number(m.ts)))
          .reverse();
        return answer<ConversationsHistoryResponse>({
          ok: true,
          messages: top.slice(0, limit).map(messageJson),
          has_more: top.length > limit,
        });
      }
      case "conversations.replies": {
        // The thread of a message: the parent first, then its replies, oldest first.
        const c = channelFor(p.channel);
        need(req, c.is_private ? "groups:history" : "channels:history");
        if (!c.is_member) throw new SlackError("not_in_channel");
        const parent = state.messages.find((m) => m.channel === c.id && m.ts === p.ts);
        if (!parent) throw new SlackError("thread_not_found");
        const root = parent.thread_ts ?? parent.ts;
        const thread = state.messages.filter((m) => m.channel === c.id && (m.ts === root || m.thread_ts === root));
        const limit = Math.min(Number(p.limit ?? 1000) || 1000, 1000);
        return answer<ConversationsRepliesResponse>({
          ok: true,
          messages: thread.slice(0, limit).map(messageJson),
          has_more: thread.length > limit,
        });
      }
      case "chat.postMessage": {
        need(req, "chat:write");
        const args = checkPostMessage(p);
        const c = channelFor(args.channel);
        postable(req, c);
        // Past 40,000 characters Slack truncates and warns (chat.postMessage, "Truncating content").
        const chars = [...args.text];
        const truncated = chars.length > 40_000;
        const m = record(c.id, truncated ? chars.slice(0, 40_000).join("") : args.text, args.thread_ts, []);
        return answer<ChatPostMessageResponse>({
          ok: true,
          channel: c.id,
          ts: m.ts,
          message: messageJson(m),
          ...(truncated && { warning: "message_truncated", response_metadata: { warnings: ["message_truncated"] } }),
        });
      }
      case "files.getUploadURLExternal": {
        need(req, "files:write");
        const args = checkUploadUrl(p);
        const f: Upload = {
          id: `F0${randomBytes(5).toString("hex").toUpperCase()}`,
          token: randomBytes(12).toString("base64url"),
          name: args.filename,
          length: args.length,
          ...(args.alt && { alt: args.alt }),
          bytes: null,
          mime: null,
          shares: [],
        };
        state.uploads.set(f.id, f);
        return answer<FilesGetUploadURLExternalResponse>({
          ok: true,
          upload_url: `${base}/upload/v1/${f.token}`,
          file_id: f.id,
        });
      }
      case "files.completeUploadExternal": {
        need(req, "files:write");
        const args = checkComplete(p);
        const files = args.files.map((x) => {
          const f = state.uploads.get(x.id);
          // A file whose bytes never reached the upload URL cannot be completed.
          if (!f || !f.bytes) throw new SlackError("file_not_found");
          if (x.title) f.title = x.title;
          return f;
        });
        if (args.channel_id) {
          const c = channelFor(args.channel_id);
          postable(req, c);
          const m = record(c.id, args.initial_comment ?? "", args.thread_ts, files);
          for (const f of files)
            f.shares.push({ channel: c.id, ts: m.ts, ...(m.thread_ts && { thread_ts: m.thread_ts }) });
        }
        // The files are shared after Slack has processed them: the answer does not show the shares yet.
        return answer<FilesCompleteUploadExternalResponse>({
          ok: true,
          files: files.map((f) => ({ ...fileJson(f), shares: {} })),
        });
      }
      case "files.info": {
        need(req, "files:read");
        const f = state.uploads.get(String(p.file ?? ""));
        if (!f || !f.bytes) throw new SlackError("file_not_found");
        return answer<FilesInfoResponse>({ ok: true, file: fileJson(f) });
      }
    }
    throw new SlackError("unknown_method");
  }

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    if (req.method === "GET" && (path === "/oauth/authorize" || path === "/oauth/v2/authorize")) return authorize(url);
    if (req.method === "POST" && (path === "/oauth/token" || path === "/api/oauth.v2.access")) return token(req);
    const upload = /^\/upload\/v1\/([A-Za-z0-9_-]+)$/.exec(path);
    if (upload && req.method === "POST") {
      const f = [...state.uploads.values()].find((x) => x.token === upload[1]);
      if (!f) return new Response("not found", { status: 404 });
      // Raw bytes or a multipart form with the file (files.getUploadURLExternal, "Usage info").
      let bytes: Uint8Array;
      if ((req.headers.get("content-type") ?? "").startsWith("multipart/form-data")) {
        const part = ([...(await req.formData()).values()] as unknown[]).find((v): v is Blob => v instanceof Blob);
        bytes = part ? new Uint8Array(await part.arrayBuffer()) : new Uint8Array();
      } else bytes = new Uint8Array(await req.arrayBuffer());
      if (bytes.byteLength === 0 || bytes.byteLength !== f.length)
        return new Response(`length mismatch: expected ${f.length}, got ${bytes.byteLength}`, { status: 400 });
      f.mime = inspectMedia(bytes).mime;
      f.bytes = bytes.subarray(0, 64);
      return new Response(`OK - ${bytes.byteLength}`, { headers: { "content-type": "text/plain" } });
    }
    const method = /^\/api\/([A-Za-z.]+)$/.exec(path);
    if (method && (req.method === "POST" || req.method === "GET")) return api(req, method[1], url, base);
    return new Response("not found", { status: 404 });
  }

  function failureResponse(f: FailureSpec, req: Request): Response | null {
    if (f.kind === "rate_limit")
      return Response.json(
        { ok: false, error: "ratelimited" },
        { status: 429, headers: { "retry-after": String(f.retryAfterSeconds ?? 30) } },
      );
    if (f.kind === "server_error") return Response.json({ ok: false, error: "internal_error" }, { status: 500 });
    if (f.kind === "auth_expired") {
      oauth.expire(req);
      return fail("token_expired");
    }
    if (f.kind === "forbidden") return fail("missing_scope", { needed: "chat:write", provided: "incoming-webhook" });
    return null;
  }

  return {
    platform: "slack",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => path.startsWith("/api/") && path !== "/api/oauth.v2.access",
      failureNames: (path) => [path, path.slice("/api/".length)],
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: SlackError,
      errorResponse: (e) => fail(e.error, e.extra),
    }),
    posts: () => [...state.emulated],
    files: () =>
      [...state.uploads.values()]
        .filter((f) => f.bytes)
        .map((f) => ({ id: f.id, name: f.name, ...(f.alt && { alt: f.alt }), size: f.length, mime: f.mime })),
    setFollowers(count) {
      for (const c of Object.values(state.channels)) c.num_members = count;
    },
    pickChannel(id) {
      channelFor(id);
      state.picked = id;
    },
    channel: (id) => channelFor(id),
    engage(ts, counts) {
      const m = state.messages.find((x) => x.ts === ts);
      if (!m) throw new Error(`no message ${ts}`);
      addCounts(m as unknown as Record<"reactions" | "reply_count", number>, {
        reactions: counts.reactions,
        reply_count: counts.replies,
      });
    },
    reset() {
      failures.clear();
      oauth.reset();
      state.reset();
    },
  };
}

export default defineEmulator(() => createSlackEmulator());
