/**
 * An emulator of the part of Bluesky the plugin uses: a PDS (sessions, blobs, post records, identity),
 * the AppView reads proxied through it (profile, author feed, posts with counts) and the video service
 * (service-auth upload, processing jobs). It answers with XRPC's error shape `{error, message}` and
 * status codes, and checks what the real services check: tokens and their kind and expiry, service-auth
 * audience and method, record shape and limits, blob ownership, types and sizes.
 */
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  mountBase,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";
import { cid, jwt, plcDid, tid } from "./emulator-ids.ts";
import { BLOB_REFUSAL, postView, validatePost, type StoredRecord } from "./emulator-records.ts";
import { inspectMedia } from "../../src/platform/emulator-media.ts";
import { loadLexicons } from "./emulator-lexicon.ts";
import { recordIndex } from "./emulator-index.ts";

const ACCESS_TTL_MS = 2 * 3600_000;
const REFRESH_TTL_MS = 90 * 86400_000;
const MAX_BLOB_BYTES = 100_000_000;
const DAILY_VIDEOS = 25;
const RETAINED_BLOB_BYTES = 256 * 1024 * 1024;

interface Account {
  did: string;
  handle: string;
  email: string;
  /** Set for accounts a test registered with a password; others accept any password (sandbox). */
  password?: string;
  displayName: string;
  followers: number;
  videosToday: number;
  /** The UTC day videosToday counts (the quota is per day). */
  videoDay: string;
  videoRefusal?: string;
}

interface Token {
  did: string;
  scope: "access" | "refresh";
  exp: number;
  revoked: boolean;
  /** The refresh token an access token was issued with, so deleting a session ends both. */
  family: string;
}

interface ServiceToken {
  iss: string;
  aud: string;
  lxm: string;
  exp: number;
}

interface Blob {
  did: string;
  cid: string;
  mimeType: string;
  size: number;
  /** null once evicted: the emulator keeps a bounded amount of media in memory. */
  bytes: Uint8Array<ArrayBuffer> | null;
}

interface VideoJob {
  jobId: string;
  did: string;
  bytes: Uint8Array<ArrayBuffer> | null;
  valid: boolean;
  polls: number;
  blob?: Blob;
}

export interface BlueskyEmulator extends Emulator {
  /** An account whose password is checked (accounts that sign in without being registered take any). */
  registerAccount(a: { handle: string; password?: string; displayName?: string; followers?: number }): string;
  /** Adds likes, reposts, quotes or bookmarks to a post, as if other people had engaged with it. */
  engage(uri: string, counts: { likes?: number; reposts?: number; quotes?: number; bookmarks?: number }): void;
  /** Makes the video service refuse uploads for the account (as for an unverified email). */
  refuseVideo(did: string, message: string): void;
  /** The stored record of a post, as the PDS keeps it. */
  record(uri: string): Record<string, unknown> | undefined;
}

export interface BlueskyEmulatorOptions {
  now?: () => number;
  /** getJobStatus calls before a video job completes (default 2: one "encoding" answer, then done). */
  videoPolls?: number;
  /** Media bytes kept for getBlob (default 256 MB); older blobs keep their metadata but lose their bytes. */
  retainedBlobBytes?: number;
}

class XrpcError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });

const bad = (message: string, error = "InvalidRequest") => new XrpcError(400, error, message);

export function createBlueskyEmulator(opts: BlueskyEmulatorOptions = {}): BlueskyEmulator {
  const now = opts.now ?? Date.now;
  const videoPolls = opts.videoPolls ?? 2;
  const retainLimit = opts.retainedBlobBytes ?? RETAINED_BLOB_BYTES;
  const failures = new FailurePlan();
  const state = resettable(() => ({
    accounts: new Map<string, Account>(),
    tokens: new Map<string, Token>(),
    serviceTokens: new Map<string, ServiceToken>(),
    blobs: new Map<string, Blob>(),
    records: new Map<string, StoredRecord>(),
    jobs: new Map<string, VideoJob>(),
    emulated: [] as EmulatedPost[],
    retained: 0,
  }));
  const index = recordIndex(() => state.records);

  const byHandle = (handle: string) => [...state.accounts.values()].find((a) => a.handle === handle.toLowerCase());
  const byActor = (actor: string) => state.accounts.get(actor) ?? byHandle(actor);
  const videosUsed = (acc: Account) => {
    const day = new Date(now()).toISOString().slice(0, 10);
    if (acc.videoDay !== day) {
      acc.videoDay = day;
      acc.videosToday = 0;
    }
    return acc.videosToday;
  };

  function ensureAccount(handle: string, email?: string): Account {
    const existing = byHandle(handle);
    if (existing) return existing;
    const did = plcDid(handle);
    const acc: Account = {
      did,
      handle,
      email: email ?? `${handle.split(".")[0]}@example.com`,
      displayName: handle.split(".")[0],
      followers: 0,
      videosToday: 0,
      videoDay: "",
    };
    state.accounts.set(did, acc);
    return acc;
  }

  function didDoc(acc: Account, base: string) {
    return {
      "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"],
      id: acc.did,
      alsoKnownAs: [`at://${acc.handle}`],
      service: [{ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: base }],
    };
  }

  function issueSession(acc: Account, base: string) {
    const t = now();
    const refreshJwt = jwt({
      scope: "com.atproto.refresh",
      sub: acc.did,
      iat: Math.floor(t / 1000),
      exp: Math.floor((t + REFRESH_TTL_MS) / 1000),
    });
    const accessJwt = jwt({
      scope: "com.atproto.appPass",
      sub: acc.did,
      iat: Math.floor(t / 1000),
      exp: Math.floor((t + ACCESS_TTL_MS) / 1000),
    });
    state.tokens.set(refreshJwt, {
      did: acc.did,
      scope: "refresh",
      exp: t + REFRESH_TTL_MS,
      revoked: false,
      family: refreshJwt,
    });
    state.tokens.set(accessJwt, {
      did: acc.did,
      scope: "access",
      exp: t + ACCESS_TTL_MS,
      revoked: false,
      family: refreshJwt,
    });
    return {
      accessJwt,
      refreshJwt,
      handle: acc.handle,
      did: acc.did,
      didDoc: didDoc(acc, base),
      email: acc.email,
      emailConfirmed: true,
      emailAuthFactor: false,
      active: true,
    };
  }

  const bearerOf = (req: Request) => {
    const h = req.headers.get("authorization") ?? "";
    return h.toLowerCase().startsWith("bearer ") ? h.slice(7).trim() : null;
  };

  /** The account behind a session token of the expected kind, or the error the PDS gives. */
  function authed(req: Request, scope: "access" | "refresh" = "access"): Account {
    const raw = bearerOf(req);
    if (!raw) throw new XrpcError(401, "AuthMissing", "Authentication Required");
    const tok = state.tokens.get(raw);
    if (!tok) throw new XrpcError(401, "InvalidToken", "Token could not be verified");
    if (tok.scope !== scope) throw bad("Invalid token type", "InvalidToken");
    if (tok.revoked) throw bad("Token has been revoked", "ExpiredToken");
    if (tok.exp <= now()) throw bad("Token has expired", "ExpiredToken");
    return state.accounts.get(tok.did)!;
  }

  /** A service-auth token minted by getServiceAuth, for this host and this method. */
  function serviceAuthed(req: Request, base: string, lxm: string): Account {
    const raw = bearerOf(req);
    if (!raw) throw new XrpcError(401, "AuthMissing", "Authentication Required");
    const st = state.serviceTokens.get(raw);
    if (!st) throw new XrpcError(401, "BadJwt", "Token could not be verified");
    if (st.exp * 1000 <= now()) throw new XrpcError(401, "JwtExpired", "jwt expired");
    if (st.aud !== didWebOf(base))
      throw new XrpcError(401, "BadJwtAudience", `jwt audience does not match service did: ${st.aud}`);
    if (st.lxm !== lxm)
      throw new XrpcError(401, "BadJwtLexiconMethod", `bad jwt lexicon method ("lxm"). must match: ${lxm}`);
    return state.accounts.get(st.iss)!;
  }

  const didWebOf = (base: string) => `did:web:${encodeURIComponent(new URL(base).host)}`;

  async function readJson(req: Request): Promise<Record<string, unknown>> {
    if (!(req.headers.get("content-type") ?? "").includes("application/json"))
      throw bad("Wrong request encoding (Content-Type): expected application/json");
    try {
      const v = await req.json();
      if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error();
      return v as Record<string, unknown>;
    } catch {
      throw bad("Request body is not valid JSON");
    }
  }

  /** The blob types the sandbox stores: raster images and video, never markup, scripts or SVG. */
  const BLOB_TYPES = /^(image\/(jpeg|png|gif|webp|heic|heif|avif|bmp)|video\/(mp4|mpeg|quicktime|webm|x-m4v))$/;

  async function readBytes(req: Request): Promise<{ mimeType: string; bytes: Uint8Array<ArrayBuffer> }> {
    const mimeType = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (!mimeType) throw bad("Request encoding (Content-Type) required but not provided");
    const bytes = new Uint8Array(await req.arrayBuffer());
    if (bytes.length > MAX_BLOB_BYTES) throw new XrpcError(413, "PayloadTooLarge", "request entity too large");
    return { mimeType, bytes };
  }

  const storeBlob = (did: string, mimeType: string, bytes: Uint8Array<ArrayBuffer>): Blob => {
    const key = `${did} ${cid(bytes, "raw")}`;
    const existing = state.blobs.get(key);
    if (existing?.bytes) return existing;
    const b: Blob = { did, cid: key.split(" ")[1], mimeType, size: bytes.length, bytes };
    state.blobs.set(key, b);
    state.retained += bytes.length;
    // A sandbox runs inside the server: evict the oldest bytes rather than grow without bound.
    for (const old of state.blobs.values()) {
      if (state.retained <= retainLimit) break;
      if (old.bytes && old !== b) {
        state.retained -= old.bytes.length;
        old.bytes = null;
      }
    }
    return b;
  };
  const blobRef = (b: Blob) => ({ $type: "blob", ref: { $link: b.cid }, mimeType: b.mimeType, size: b.size });
  const blobUrl = (base: string, did: string, c: string) =>
    `${base}/xrpc/com.atproto.sync.getBlob?did=${encodeURIComponent(did)}&cid=${encodeURIComponent(c)}`;

  function author(did: string) {
    const a = state.accounts.get(did);
    return { did, handle: a?.handle ?? "handle.invalid", displayName: a?.displayName ?? "", labels: [] };
  }

  const view = (r: StoredRecord, base: string) =>
    postView(r, {
      author: author(r.did),
      blobUrl: (did, c) => blobUrl(base, did, c),
      replyCount: index.replyCount(r.uri),
    });

  function looksLikeVideo(b: Uint8Array): boolean {
    const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
    return (
      (b.length > 12 && ascii(4, 8) === "ftyp") ||
      (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) ||
      (b[0] === 0 && b[1] === 0 && b[2] === 1 && (b[3] === 0xba || b[3] === 0xb3))
    );
  }

  type Handler = (req: Request, url: URL, base: string) => Promise<Response> | Response;
  const q = (url: URL, name: string) => {
    const v = url.searchParams.get(name);
    if (v === null || v === "") throw bad(`Params must have the property "${name}"`);
    return v;
  };

  const procedures: Record<string, Handler> = {
    async "com.atproto.server.createSession"(req, _url, base) {
      const body = await readJson(req);
      if (typeof body.identifier !== "string") throw bad('Input must have the property "identifier"');
      if (typeof body.password !== "string") throw bad('Input must have the property "password"');
      const ident = body.identifier.trim().toLowerCase();
      let acc: Account | undefined;
      if (ident.startsWith("did:")) acc = state.accounts.get(ident);
      else if (ident.includes("@"))
        acc =
          [...state.accounts.values()].find((a) => a.email === ident) ??
          ensureAccount(`${ident.split("@")[0]}.bsky.social`, ident);
      else if (/^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*$/.test(ident))
        acc = byHandle(ident) ?? (body.password ? ensureAccount(ident) : undefined);
      if (!acc || !body.password || (acc.password !== undefined && acc.password !== body.password)) {
        throw new XrpcError(401, "AuthenticationRequired", "Invalid identifier or password");
      }
      return json(issueSession(acc, base));
    },
    async "com.atproto.server.refreshSession"(req, _url, base) {
      const acc = authed(req, "refresh");
      const old = state.tokens.get(bearerOf(req)!)!;
      // Refresh tokens rotate: the one used is spent.
      old.revoked = true;
      return json(issueSession(acc, base));
    },
    async "com.atproto.server.deleteSession"(req) {
      authed(req, "refresh");
      const family = bearerOf(req)!;
      for (const t of state.tokens.values()) if (t.family === family) t.revoked = true;
      return new Response(null, { status: 200 });
    },
    async "com.atproto.repo.uploadBlob"(req) {
      const acc = authed(req);
      const { mimeType, bytes } = await readBytes(req);
      // Crier's sandbox rule, not the PDS's (a PDS stores a blob of any type, the lexicon's accept is */*):
      // only the image and video types posts embed, so nothing a browser would run is ever stored here.
      if (!BLOB_TYPES.test(mimeType)) throw bad(`Unsupported blob type in the sandbox: ${mimeType}`);
      // The PDS sniffs the bytes and records the type they are, over the one the client declared (atproto
      // packages/pds, actor-store/blob: sniffed type first; checked 2026-11-26): a PNG sent as image/jpeg
      // is an image/png blob, and a record then claiming image/jpeg does not match it.
      const sniffed = inspectMedia(bytes).mime;
      return json({ blob: blobRef(storeBlob(acc.did, sniffed ?? mimeType, bytes)) });
    },
    async "com.atproto.repo.createRecord"(req) {
      const acc = authed(req);
      const body = await readJson(req);
      if (body.repo !== acc.did && body.repo !== acc.handle) throw bad("Input/repo must be the authenticated account");
      if (body.collection !== "app.bsky.feed.post") throw bad(`Unsupported collection: ${String(body.collection)}`);
      const record = body.record as Record<string, unknown> | undefined;
      if (!record || typeof record !== "object") throw bad('Input must have the property "record"');
      // The lexicon first (shapes, formats, lengths), then what it cannot know (blobs, parents, byte ranges).
      const lexicons = await loadLexicons();
      const invalid = lexicons?.record("app.bsky.feed.post", record);
      if (invalid) throw bad(`Invalid app.bsky.feed.post record: ${invalid}`);
      const problem = validatePost(record, {
        blob: (c) => state.blobs.get(`${acc.did} ${c}`),
        record: (uri) => state.records.get(uri),
        imageMaxSize: lexicons?.blobMaxSize("app.bsky.embed.images#image", "image"),
      });
      if (problem?.startsWith(BLOB_REFUSAL.size)) throw bad(problem, "BlobTooLarge");
      if (problem?.startsWith(BLOB_REFUSAL.mime)) throw bad(problem, "InvalidMimeType");
      if (problem) throw bad(`Invalid app.bsky.feed.post record: ${problem}`);
      const rkey = typeof body.rkey === "string" ? body.rkey : tid(now());
      const uri = `at://${acc.did}/app.bsky.feed.post/${rkey}`;
      if (state.records.has(uri)) throw bad(`Record already exists: ${uri}`);
      const recordCid = cid(JSON.stringify(record), "dag-cbor");
      const parent = (record.reply as { parent?: { uri?: string } } | undefined)?.parent?.uri ?? null;
      const stored: StoredRecord = {
        uri,
        cid: recordCid,
        did: acc.did,
        rkey,
        value: record,
        indexedAt: new Date(now()).toISOString(),
        replyParent: parent,
        likes: 0,
        reposts: 0,
        quotes: 0,
        bookmarks: 0,
      };
      state.records.set(uri, stored);
      index.added(stored);
      state.emulated.push({
        id: uri,
        text: String(record.text ?? ""),
        media: mediaOfRecord(record),
        replyTo: parent,
        options: record.facets ? { facets: record.facets } : undefined,
        createdAt: new Date(now()),
      });
      return json({
        uri,
        cid: recordCid,
        commit: { cid: cid(`commit ${uri}`, "dag-cbor"), rev: tid(now()) },
        validationStatus: "valid",
      });
    },
    async "app.bsky.video.uploadVideo"(req, url, base) {
      const acc = serviceAuthed(req, base, "com.atproto.repo.uploadBlob");
      if (q(url, "did") !== acc.did) throw bad("did does not match the token issuer");
      q(url, "name");
      const { mimeType, bytes } = await readBytes(req);
      if (!mimeType.startsWith("video/")) throw bad(`Unsupported video type: ${mimeType}`);
      if (acc.videoRefusal || videosUsed(acc) >= DAILY_VIDEOS)
        throw bad(acc.videoRefusal ?? "Daily video limit reached", "UploadLimitExceeded");
      acc.videosToday += 1;
      const jobId = crypto.randomUUID();
      state.jobs.set(jobId, { jobId, did: acc.did, bytes, valid: looksLikeVideo(bytes), polls: 0 });
      return json({ jobStatus: { jobId, did: acc.did, state: "JOB_STATE_CREATED", progress: 0 } });
    },
  };

  const queries: Record<string, Handler> = {
    "com.atproto.server.getSession"(req, _url, base) {
      const acc = authed(req);
      return json({
        handle: acc.handle,
        did: acc.did,
        email: acc.email,
        emailConfirmed: true,
        didDoc: didDoc(acc, base),
        active: true,
      });
    },
    "com.atproto.server.getServiceAuth"(req, url) {
      const acc = authed(req);
      const aud = q(url, "aud");
      if (!aud.startsWith("did:")) throw bad("aud must be a DID");
      const lxm = url.searchParams.get("lxm") ?? "";
      const nowS = Math.floor(now() / 1000);
      const exp = url.searchParams.has("exp") ? Number(url.searchParams.get("exp")) : nowS + 60;
      if (!Number.isInteger(exp) || exp <= nowS) throw bad("expiration is in the past", "BadExpiration");
      if (exp - nowS > (lxm ? 3600 : 60)) throw bad("expiration is too far in the future", "BadExpiration");
      const token = jwt({ iss: acc.did, aud, lxm, exp });
      state.serviceTokens.set(token, { iss: acc.did, aud, lxm, exp });
      return json({ token });
    },
    "com.atproto.repo.getRecord"(_req, url) {
      const repo = q(url, "repo");
      const did = byActor(repo)?.did ?? repo;
      const r = state.records.get(`at://${did}/${q(url, "collection")}/${q(url, "rkey")}`);
      if (!r)
        throw bad(
          `Could not locate record: at://${did}/${url.searchParams.get("collection")}/${url.searchParams.get("rkey")}`,
          "RecordNotFound",
        );
      return json({ uri: r.uri, cid: r.cid, value: r.value });
    },
    "com.atproto.identity.resolveHandle"(_req, url) {
      const acc = byHandle(q(url, "handle"));
      if (!acc) throw bad("Unable to resolve handle");
      return json({ did: acc.did });
    },
    "com.atproto.sync.getBlob"(_req, url) {
      const b = state.blobs.get(`${q(url, "did")} ${q(url, "cid")}`);
      if (!b?.bytes) throw bad("Blob not found", "BlobNotFound");
      // As the PDS serves blobs (its getBlob handler, checked 2026-11-26): never as a page of its own origin.
      return new Response(b.bytes, {
        headers: {
          "content-type": b.mimeType,
          "content-length": String(b.size),
          "content-security-policy": "default-src 'none'; sandbox",
          "x-content-type-options": "nosniff",
        },
      });
    },
    "app.bsky.actor.getProfile"(req, url) {
      authed(req);
      const acc = byActor(q(url, "actor"));
      if (!acc) throw bad("Profile not found");
      const postsCount = index.byAuthor(acc.did).length;
      return json({
        ...author(acc.did),
        followersCount: acc.followers,
        followsCount: 0,
        postsCount,
        indexedAt: new Date(now()).toISOString(),
      });
    },
    "app.bsky.feed.getAuthorFeed"(req, url, base) {
      authed(req);
      const acc = byActor(q(url, "actor"));
      if (!acc) throw bad("Profile not found");
      const limit = Number(url.searchParams.get("limit") ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw bad("limit must be an integer between 1 and 100");
      const filter = url.searchParams.get("filter") ?? "posts_with_replies";
      const cursor = url.searchParams.get("cursor");
      const mine = index
        .byAuthor(acc.did)
        .filter((r) => filter !== "posts_no_replies" || !r.replyParent)
        .filter((r) => filter !== "posts_with_media" || r.value.embed)
        .sort((a, b) =>
          a.indexedAt === b.indexedAt ? b.rkey.localeCompare(a.rkey) : b.indexedAt.localeCompare(a.indexedAt),
        );
      const key = (r: StoredRecord) => `${r.indexedAt}::${r.rkey}`;
      const after = cursor ? mine.filter((r) => key(r) < cursor) : mine;
      const page = after.slice(0, limit);
      const next = after.length > limit ? key(page[page.length - 1]) : undefined;
      return json({ feed: page.map((r) => ({ post: view(r, base) })), ...(next && { cursor: next }) });
    },
    "app.bsky.feed.getPosts"(req, url, base) {
      authed(req);
      const uris = url.searchParams.getAll("uris");
      if (uris.length > 25) throw bad("uris must not have more than 25 elements");
      return json({
        posts: uris
          .map((u) => state.records.get(u))
          .filter((r): r is StoredRecord => !!r)
          .map((r) => view(r, base)),
      });
    },
    "app.bsky.video.getUploadLimits"(req, _url, base) {
      const acc = serviceAuthed(req, base, "app.bsky.video.getUploadLimits");
      const canUpload = !acc.videoRefusal && videosUsed(acc) < DAILY_VIDEOS;
      return json({
        canUpload,
        remainingDailyVideos: Math.max(0, DAILY_VIDEOS - acc.videosToday),
        remainingDailyBytes: 10_000_000_000,
        ...(!canUpload && { error: "limit", message: acc.videoRefusal ?? "Daily video limit reached" }),
      });
    },
    "app.bsky.video.getJobStatus"(_req, url) {
      const job = state.jobs.get(q(url, "jobId"));
      if (!job) throw bad("Job not found", "NotFound");
      job.polls += 1;
      const base = { jobId: job.jobId, did: job.did };
      if (!job.valid)
        return json({
          jobStatus: {
            ...base,
            state: "JOB_STATE_FAILED",
            error: "validation_failure",
            message: "the file is not a video we can read",
          },
        });
      if (job.polls < videoPolls)
        return json({
          jobStatus: { ...base, state: "JOB_STATE_ENCODING", progress: Math.round((100 * job.polls) / videoPolls) },
        });
      // Processing done: the result is stored in the user's repo as an MP4 blob.
      if (!job.blob) {
        job.blob = storeBlob(job.did, "video/mp4", job.bytes!);
        job.bytes = null;
      }
      return json({ jobStatus: { ...base, state: "JOB_STATE_COMPLETED", progress: 100, blob: blobRef(job.blob) } });
    },
  };

  function failureResponse(f: FailureSpec, req: Request): Response | null {
    if (f.kind === "rate_limit") {
      const wait = f.retryAfterSeconds ?? 60;
      return json({ error: "RateLimitExceeded", message: "Rate Limit Exceeded" }, 429, {
        "ratelimit-limit": "3000",
        "ratelimit-remaining": "0",
        "ratelimit-policy": "3000;w=300",
        "ratelimit-reset": String(Math.ceil(now() / 1000) + wait),
      });
    }
    if (f.kind === "server_error") return json({ error: "InternalServerError", message: "Internal Server Error" }, 500);
    if (f.kind === "auth_expired") {
      // The presented token really is expired from now on: only a refresh gets the account going again.
      const t = state.tokens.get(bearerOf(req) ?? "");
      if (t) t.exp = Math.min(t.exp, now());
      return json({ error: "ExpiredToken", message: "Token has expired" }, 400);
    }
    return null;
  }

  /** The method's parameters and JSON input, as its lexicon declares them; XRPC answers 400 otherwise. */
  async function checkAgainstLexicon(req: Request, nsid: string): Promise<void> {
    const lexicons = await loadLexicons();
    if (!lexicons) return;
    const params = lexicons.params(nsid, new URL(req.url).searchParams);
    if (params) throw bad(params);
    if (!(req.headers.get("content-type") ?? "").includes("application/json")) return;
    const body = await req
      .clone()
      .json()
      .catch(() => undefined);
    const input = body === undefined ? null : lexicons.input(nsid, body);
    if (input) throw bad(input);
  }

  const nsidOf = (path: string) => /^\/xrpc\/([a-zA-Z0-9.]+)$/.exec(path)?.[1];

  // A failure's `on` may name the XRPC method as well as the path.
  const xrpc = failingHandler({
    failures,
    canFail: () => true,
    failureNames: (path) => [path, nsidOf(path)!],
    failureResponse,
    async route(req, path) {
      const nsid = nsidOf(path)!;
      const handler = req.method === "POST" ? procedures[nsid] : req.method === "GET" ? queries[nsid] : undefined;
      if (handler) {
        await checkAgainstLexicon(req, nsid);
        return handler(req, new URL(req.url), mountBase(req, path));
      }
      const known = nsid in procedures || nsid in queries;
      return json(
        known
          ? { error: "InvalidRequest", message: "Incorrect HTTP method" }
          : { error: "MethodNotImplemented", message: "Method Not Implemented" },
        known ? 400 : 501,
      );
    },
    error: XrpcError,
    errorResponse: (e) => json({ error: e.error, message: e.message }, e.status),
  });

  return {
    platform: "bluesky",
    state: emulatorState({ state }),
    async handle(req, path) {
      if (!nsidOf(path)) return json({ error: "NotFound", message: "Not Found" }, 404);
      return xrpc.handle(req, path);
    },
    failNext: xrpc.failNext,
    posts: () => [...state.emulated],
    setFollowers(n) {
      for (const a of state.accounts.values()) a.followers = n;
    },
    reset() {
      failures.clear();
      state.reset();
    },
    registerAccount(a) {
      const acc = ensureAccount(a.handle.toLowerCase());
      if (a.password !== undefined) acc.password = a.password;
      if (a.displayName !== undefined) acc.displayName = a.displayName;
      if (a.followers !== undefined) acc.followers = a.followers;
      return acc.did;
    },
    engage(uri, counts) {
      const r = state.records.get(uri);
      if (!r) throw new Error(`no post ${uri}`);
      addCounts(r, counts);
    },
    refuseVideo(did, message) {
      const acc = state.accounts.get(did);
      if (!acc) throw new Error(`no account ${did}`);
      acc.videoRefusal = message;
    },
    record: (uri) => state.records.get(uri)?.value,
  };
}

function mediaOfRecord(record: Record<string, unknown>): EmulatedPost["media"] {
  const embed = record.embed as
    | {
        $type?: string;
        images?: { image: { mimeType: string; size: number }; alt: string }[];
        video?: { mimeType: string; size: number };
        alt?: string;
      }
    | undefined;
  if (embed?.$type === "app.bsky.embed.images")
    return (embed.images ?? []).map((i) => ({
      type: "image",
      contentType: i.image.mimeType,
      size: i.image.size,
      ...(i.alt && { alt: i.alt }),
    }));
  if (embed?.$type === "app.bsky.embed.video" && embed.video)
    return [
      {
        type: "video",
        contentType: embed.video.mimeType,
        size: embed.video.size,
        ...(embed.alt && { alt: embed.alt }),
      },
    ];
  return [];
}

export default defineEmulator(() => createBlueskyEmulator());
