/**
 * An emulator of a Nostr relay (NIP-01: EVENT with signature checks and OK answers, REQ with stored
 * events then EOSE and live delivery, CLOSE; ephemeral kinds relayed, not stored; NIP-11 document over
 * HTTP) with a NIP-46 remote signer listening on it: kind-24133 requests NIP-44-encrypted to the bunker
 * key, answered for connect (secret checked), get_public_key, sign_event, ping and logout.
 *
 * Sandbox rule: one bunker whose URI sandbox profiles find pre-filled on the connect page
 * (SANDBOX_BUNKER_URI, with {relay} replaced by the relay the plugin uses).
 */
import type { Event, Filter } from "nostr-tools";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import { emulatorState, resettable } from "../../src/platform/emulator-kit.ts";

const NOSTR_CONNECT = 24133;
const MAX_CONTENT_BYTES = 64_000;
const isEphemeral = (kind: number) => kind >= 20000 && kind < 30000;

interface Bunker {
  sk: Uint8Array;
  pubkey: string;
  userSk: Uint8Array;
  userPubkey: string;
  secret: string;
  /** Client keys that completed connect; a logout or revoke removes them. */
  clients: Set<string>;
  refusing: boolean;
}

interface Session {
  send(msg: unknown[]): void;
  subs: Map<string, Filter[]>;
}

export interface NostrEmulator extends Emulator {
  /** The bunker URI of the emulator's remote signer for a relay URL. */
  bunkerUri(relayUrl: string): string;
  /** The public key (hex) of the user the bunker signs for. */
  userPubkey(): string;
  /** The signer refuses every request of already-connected clients from now on (the user revoked Crier). */
  revokeClients(): void;
  /** Adds reactions, reposts and replies from other keys to an event. */
  engage(eventId: string, counts: { likes?: number; reposts?: number; replies?: number }): void;
  events(): Event[];
}

export function createNostrEmulator(): NostrEmulator {
  // Loaded when an emulator is first made, not with every server (see the plugin: ≈ 5 MB of idle memory).
  // A synchronous require, because emulator factories are synchronous.
  const { finalizeEvent, generateSecretKey, getPublicKey, matchFilters, nip10, nip44, verifyEvent } =
    require("nostr-tools") as typeof import("nostr-tools");
  let failures: (FailureSpec & { left: number })[] = [];
  const sessions = new Set<Session>();
  const state = resettable(() => ({
    stored: [] as Event[],
    emulated: [] as EmulatedPost[],
    bunker: newBunker(),
  }));

  function newBunker(): Bunker {
    const sk = generateSecretKey();
    const userSk = generateSecretKey();
    return {
      sk,
      pubkey: getPublicKey(sk),
      userSk,
      userPubkey: getPublicKey(userSk),
      secret: Buffer.from(generateSecretKey()).toString("hex").slice(0, 16),
      clients: new Set(),
      refusing: false,
    };
  }

  /** The first queued failure of one of these kinds, consumed. */
  function take(kinds: FailureSpec["kind"][]): FailureSpec | undefined {
    const i = failures.findIndex((f) => kinds.includes(f.kind));
    if (i < 0) return undefined;
    const f = failures[i];
    if (--f.left <= 0) failures.splice(i, 1);
    return f;
  }

  function broadcast(event: Event) {
    for (const s of sessions) {
      for (const [id, filters] of s.subs) if (matchFilters(filters, event)) s.send(["EVENT", id, event]);
    }
  }

  function store(event: Event) {
    state.stored.push(event);
    broadcast(event);
  }

  function answerSigner(clientPubkey: string, id: string, result: string | null, error?: string) {
    const key = nip44.getConversationKey(state.bunker.sk, clientPubkey);
    const reply = finalizeEvent(
      {
        kind: NOSTR_CONNECT,
        created_at: Math.floor(Date.now() / 1000),
        tags: [["p", clientPubkey]],
        content: nip44.encrypt(JSON.stringify({ id, result: result ?? "", ...(error && { error }) }), key),
      },
      state.bunker.sk,
    );
    // A real signer answers after a network round trip; the client's subscription is in place by then.
    setTimeout(() => broadcast(reply), 1);
  }

  function signerRequest(event: Event) {
    let req: { id: string; method: string; params: string[] };
    try {
      req = JSON.parse(nip44.decrypt(event.content, nip44.getConversationKey(state.bunker.sk, event.pubkey)));
    } catch {
      return; // Not for us, or garbage: a signer ignores it.
    }
    const client = event.pubkey;
    const known = state.bunker.clients.has(client);
    switch (req.method) {
      case "connect":
        if (req.params[0] !== state.bunker.pubkey) return answerSigner(client, req.id, null, "wrong remote signer");
        if (req.params[1] !== state.bunker.secret) return answerSigner(client, req.id, null, "invalid secret");
        state.bunker.clients.add(client);
        return answerSigner(client, req.id, "ack");
      case "ping":
        return answerSigner(client, req.id, "pong");
      case "get_public_key":
        if (!known || state.bunker.refusing) return answerSigner(client, req.id, null, "unauthorized: connect first");
        return answerSigner(client, req.id, state.bunker.userPubkey);
      case "sign_event": {
        if (!known || state.bunker.refusing)
          return answerSigner(client, req.id, null, "unauthorized: this client is not allowed to sign");
        if (take(["auth_expired"]))
          return answerSigner(client, req.id, null, "unauthorized: permission revoked by the user");
        let template: { kind: number; content: string; tags: string[][]; created_at: number };
        try {
          template = JSON.parse(req.params[0]);
        } catch {
          return answerSigner(client, req.id, null, "invalid event");
        }
        const signed = finalizeEvent(
          {
            kind: template.kind,
            content: template.content,
            tags: template.tags ?? [],
            created_at: template.created_at,
          },
          state.bunker.userSk,
        );
        return answerSigner(client, req.id, JSON.stringify(signed));
      }
      case "logout":
        state.bunker.clients.delete(client);
        return answerSigner(client, req.id, "ack");
      case "switch_relays":
        return answerSigner(client, req.id, "null");
      default:
        return answerSigner(client, req.id, null, `unsupported method ${req.method}`);
    }
  }

  function onEvent(session: Session, event: Event) {
    const ok = (accepted: boolean, message = "") => session.send(["OK", event?.id ?? "", accepted, message]);
    if (!event || typeof event !== "object" || !verifyEvent(event))
      return ok(false, "invalid: bad event id or signature");
    if (state.stored.some((e) => e.id === event.id)) return ok(true, "duplicate: already have this event");
    if (event.kind === 1) {
      const f = take(["rate_limit", "server_error", "timeout"]);
      if (f?.kind === "rate_limit") return ok(false, "rate-limited: slow down, too many events");
      if (f?.kind === "server_error") return ok(false, "error: could not save the event");
      if (Buffer.byteLength(event.content, "utf8") > MAX_CONTENT_BYTES)
        return ok(false, `invalid: content longer than ${MAX_CONTENT_BYTES} bytes`);
      // What a client shows, read by nostr-tools' NIP-10 parser and by NIP-92's rule for imeta: a tag counts
      // only with a url that appears in the content and at least one other field (NIP-92, checked 2026-11-26).
      const thread = nip10.parse(event);
      state.emulated.push({
        id: event.id,
        text: event.content,
        media: event.tags
          .filter((t) => t[0] === "imeta")
          .map((t) =>
            Object.fromEntries(t.slice(1).map((f) => [f.slice(0, f.indexOf(" ")), f.slice(f.indexOf(" ") + 1)])),
          )
          .filter((f: Record<string, string>) => f.url && event.content.includes(f.url) && Object.keys(f).length > 1)
          .map((f: Record<string, string>) => {
            const mime = f.m ?? "";
            return {
              type: mime.startsWith("video/") ? "video" : "image",
              contentType: mime || undefined,
              ...(f.alt !== undefined && { alt: f.alt }),
            };
          }),
        replyTo: (thread.reply ?? thread.root)?.id ?? null,
        createdAt: new Date(event.created_at * 1000),
      });
      store(event);
      // A relay that stored the event but whose answer never arrives: the publisher cannot know.
      if (f?.kind === "timeout") return;
      return ok(true);
    }
    if (isEphemeral(event.kind)) {
      ok(true);
      broadcast(event);
      if (event.kind === NOSTR_CONNECT && event.tags.some((t) => t[0] === "p" && t[1] === state.bunker.pubkey))
        signerRequest(event);
      return;
    }
    store(event);
    ok(true);
  }

  function onReq(session: Session, id: string, filters: Filter[]) {
    if (typeof id !== "string" || filters.length === 0)
      return session.send(["CLOSED", String(id), "invalid: a REQ needs an id and filters"]);
    const matches = new Map<string, Event>();
    for (const f of filters) {
      const hits = state.stored.filter((e) => matchFilters([f], e)).sort((a, b) => b.created_at - a.created_at);
      for (const e of f.limit !== undefined ? hits.slice(0, f.limit) : hits) matches.set(e.id, e);
    }
    for (const e of [...matches.values()].sort((a, b) => b.created_at - a.created_at)) session.send(["EVENT", id, e]);
    session.send(["EOSE", id]);
    session.subs.set(id, filters);
  }

  function engageWith(kind: number, content: string, target: Event) {
    const sk = generateSecretKey();
    store(
      finalizeEvent(
        {
          kind,
          content,
          created_at: Math.floor(Date.now() / 1000),
          tags: [
            ["e", target.id, "", kind === 1 ? "reply" : ""],
            ["p", target.pubkey],
          ],
        },
        sk,
      ),
    );
  }

  return {
    platform: "nostr",
    state: emulatorState({ state }),
    sandboxSettings: {
      get SANDBOX_BUNKER_URI() {
        return `bunker://${state.bunker.pubkey}?relay={relay}&secret=${state.bunker.secret}`;
      },
    } as Record<string, string>,
    async handle(req) {
      // Relays answer their NIP-11 document over plain HTTP; everything else is WebSocket.
      if (req.method === "GET" && (req.headers.get("accept") ?? "").includes("application/nostr+json")) {
        return Response.json(
          {
            name: "Crier Nostr emulator",
            supported_nips: [1, 11, 46],
            limitation: { max_content_length: MAX_CONTENT_BYTES },
          },
          {
            headers: { "content-type": "application/nostr+json", "access-control-allow-origin": "*" },
          },
        );
      }
      return new Response("This is a Nostr relay: connect with a WebSocket.", {
        status: 426,
        headers: { upgrade: "websocket" },
      });
    },
    openSocket(_path, send) {
      const session: Session = { send: (msg) => send(JSON.stringify(msg)), subs: new Map() };
      sessions.add(session);
      return {
        message(data) {
          let msg: unknown;
          try {
            msg = JSON.parse(data);
          } catch {
            return session.send(["NOTICE", "invalid: could not parse the message"]);
          }
          if (!Array.isArray(msg)) return session.send(["NOTICE", "invalid: messages are JSON arrays"]);
          if (msg[0] === "EVENT") return onEvent(session, msg[1] as Event);
          if (msg[0] === "REQ") return onReq(session, msg[1] as string, msg.slice(2) as Filter[]);
          if (msg[0] === "CLOSE") return void session.subs.delete(String(msg[1]));
          session.send(["NOTICE", `unsupported: ${String(msg[0])}`]);
        },
        close() {
          sessions.delete(session);
        },
      };
    },
    failNext(spec) {
      failures.push({ ...spec, left: Math.max(1, spec.times ?? 1) });
    },
    posts: () => [...state.emulated],
    reset() {
      failures = [];
      state.reset();
    },
    bunkerUri: (relayUrl) =>
      `bunker://${state.bunker.pubkey}?relay=${encodeURIComponent(relayUrl)}&secret=${state.bunker.secret}`,
    userPubkey: () => state.bunker.userPubkey,
    revokeClients() {
      state.bunker.refusing = true;
    },
    engage(eventId, counts) {
      const target = state.stored.find((e) => e.id === eventId);
      if (!target) throw new Error(`no event ${eventId}`);
      for (let i = 0; i < (counts.likes ?? 0); i++) engageWith(7, "+", target);
      for (let i = 0; i < (counts.reposts ?? 0); i++) engageWith(6, "", target);
      for (let i = 0; i < (counts.replies ?? 0); i++) engageWith(1, "nice", target);
    },
    events: () => [...state.stored],
  };
}

export default defineEmulator(() => createNostrEmulator());
