/**
 * The plugin contract. A platform is a folder under plugins/ whose index.ts default-exports
 * `definePlugin({...})`, and whose emulator.ts default-exports `defineEmulator({...})`.
 * A plugin never touches the database: it gets a PluginContext and returns an Outcome.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { Logger } from "../log.ts";
import type { TextUnit } from "./text.ts";
import type {
  AltTextSupport,
  AspectRatio,
  Capabilities,
  ConnectionMode,
  MediaRequirements,
  Platform,
} from "./declaration.ts";
import type { MediaItem } from "./media-item.ts";
import type { EmulatorState } from "./emulator-state.ts";

export type { ConnectionMode, MediaItem, Platform };

/** What the engine decided a publish attempt came to. */
export type Outcome =
  | {
      kind: "published";
      platformPostId: string;
      url: string | null;
      /**
       * Published, but not as asked (YouTube kept a video private that was meant to be public): the
       * target still reads published, with this code and message in its error_code and error.
       */
      notice?: { code: string; message: string };
    }
  /** The platform accepted the work and is still processing it: checkStatus(handle) later. */
  | { kind: "submitted"; handle: string }
  /** Nothing was created (connection refused, 429, 5xx before the creating call): safe to try again. */
  | { kind: "retryable"; reason: string; retryAfterMs?: number }
  /**
   * The access token is no longer accepted: the engine refreshes once, then asks the user to reconnect.
   * `scope: "server"`: the refused credential is the server's own setting that every account of the
   * platform publishes with (Telegram's one bot), so every such account needs attention, not only this one.
   */
  | { kind: "auth_expired"; reason: string; scope?: "account" | "server" }
  /** The platform refused the content or the request for good. */
  | { kind: "permanent"; reason: string; code?: string }
  /** The creating call may have gone through (timeout after sending it): never retried automatically. */
  | { kind: "unknown"; reason: string };

export interface MediaBody {
  contentType: string;
  size: number | null;
  stream(): ReadableStream<Uint8Array>;
  bytes(): Promise<Uint8Array>;
}

/**
 * Raised by MediaAccess (and by its streams) when a media item cannot be read: `retryable` when trying
 * later may work (network, timeout), otherwise the URL or the file itself is refused (private address,
 * too large, not found).
 */
export class MediaError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * The outcome of a publish whose media could not be read (`catch (e) { return unreadableMedia(e); }`):
 * retried when the trouble may pass. Anything but a MediaError is a bug and is thrown on.
 */
export function unreadableMedia(
  e: unknown,
): { kind: "retryable"; reason: string } | { kind: "permanent"; reason: string; code: string } {
  if (!(e instanceof MediaError)) throw e;
  return e.retryable
    ? { kind: "retryable", reason: e.message }
    : { kind: "permanent", reason: e.message, code: "media_unreadable" };
}

/**
 * Raised by a plugin's refresh(): `retryable` when the platform could not be asked (network, 5xx, 429),
 * so the engine tries again later instead of asking the user to reconnect; otherwise the refresh was
 * refused for good.
 */
export class RefreshError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export interface MediaAccess {
  /** Opens a media item: the server's own storage directly, anything else through the fetch guard. */
  open(item: Pick<MediaItem, "url" | "type">): Promise<MediaBody>;
}

/**
 * What the engine hands a plugin. Content and media already meet the plugin's declaration (textLimit,
 * mediaRequirements, capabilities): they were checked once, when the post was created. A plugin checks
 * again only what needs the file itself (its real type or byte size).
 */
export interface PublishJob {
  content: string;
  media: MediaItem[];
  /** Already validated against the plugin's optionsSchema; unknown keys removed. */
  options: Record<string, unknown>;
  /** For the second and later items of a thread: what to reply to. */
  replyTo?: { platformPostId: string; rootPlatformPostId?: string };
  /** Placement for platforms that fan one account into several publications (Snapchat). */
  variant?: string | null;
  /** Stable across attempts of one target: send it where the platform supports idempotency keys. */
  idempotencyToken: string;
}

export type Credentials = Record<string, unknown>;

/**
 * A target's first comment: posted by the same account right after its post was published, as a comment
 * on the post (Facebook, Instagram, LinkedIn, YouTube, Reddit) or a reply to it (X, Threads, Bluesky, Nostr).
 */
export interface CommentJob {
  /** The comment's text, as the user wrote it (checked against firstComment.textLimit at creation). */
  text: string;
  /** The published post the comment belongs to. */
  parent: { platformPostId: string; url: string | null };
  /** The target's platform options, as its publish got them (a Reddit subreddit, a Bluesky reply root). */
  options: Record<string, unknown>;
  /** Stable across attempts of one comment: send it where the platform supports idempotency keys. */
  idempotencyToken: string;
}

/**
 * What a comment attempt came to: the same classes as a publish (a comment is never "submitted").
 * `unknown` is never retried automatically: the reconciler asks findComment, else it stays unknown.
 */
export type CommentOutcome = Exclude<Outcome, { kind: "submitted" }>;

/** A platform's first-comment support: declared once, shown as capabilities.first_comment. */
export interface FirstCommentSupport {
  /** The comment's own text limit (often not the post's): checked at creation, 400 first_comment_too_long. */
  textLimit: { max: number; unit: TextUnit };
  /** "comment" (a comment under the post) or "reply" (a post replying to it): shown to clients. */
  kind: "comment" | "reply";
  /** Scopes the comment needs beyond publish's, asked for at connect and checked by `crier accounts check`. */
  scopes?: readonly string[];
  publish(ctx: PluginContext, job: CommentJob): Promise<CommentOutcome>;
  /** Whether the comment exists under the parent, for an attempt whose outcome is unknown. */
  find?(ctx: PluginContext, job: CommentJob, window: { since: Date; until: Date }): Promise<FindResult>;
  /**
   * find's "absent" proves the comment was not made (the platform lists a new comment or reply as soon as
   * its creating call returned), so one more attempt is safe after the settle delay. Declare it only where
   * the platform documents it; without it an unknown comment is never posted again by itself.
   */
  findReadAfterWrite?: boolean;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
  multipart?: FormData;
  body?: BodyInit;
  timeoutMs?: number;
  /**
   * Marks the call that creates the post. A timeout or a dropped connection after it was sent is then
   * `unknown` (it may have been created) instead of `retryable`, and so is a 5xx answer to it.
   */
  creates?: boolean;
  /**
   * With `creates`: the platform documents this call as idempotent (an idempotency key it honours), so a
   * 5xx answer proves nothing extra was created by trying again: it stays `retryable`.
   */
  idempotent?: boolean;
}

export type ProviderResult<T = unknown> =
  | { ok: true; status: number; body: T; headers: Headers }
  | {
      ok: false;
      outcome: Exclude<Outcome, { kind: "published" } | { kind: "submitted" }>;
      status?: number;
      body?: unknown;
    };

export type FailureOutcome = Exclude<Outcome, { kind: "published" } | { kind: "submitted" }>;

/** What a plugin's classifier sees of a provider answer that was not 2xx. */
export interface ProviderResponse {
  status: number;
  body: unknown;
  headers: Headers;
  /** True when the request was marked `creates: true`. */
  creates: boolean;
  /** True when it was also marked `idempotent: true`. */
  idempotent?: boolean;
}

/** The HTTP client every plugin uses: base URL, timeouts and classification of failures built in. */
export interface ProviderHttp {
  readonly baseUrl: string;
  /** The default timeout of a call, for plugins that also talk over other transports (Nostr relays). */
  readonly timeoutMs?: number;
  /**
   * The WebSocket class to reach baseUrl with (plugins of WebSocket APIs use it): for sandbox profiles an
   * in-process connection to the emulator, otherwise absent (use the global WebSocket).
   */
  readonly webSocket?: typeof WebSocket;
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<ProviderResult<T>>;
}

export interface AccountRef {
  id: string;
  remoteId: string;
  username: string;
  metadata: Record<string, unknown>;
}

export interface PluginContext {
  http: ProviderHttp;
  account: AccountRef;
  credentials: Credentials;
  /** Persists refreshed credentials (encrypted) for the account. */
  saveCredentials(c: Credentials): Promise<void>;
  media: MediaAccess;
  /**
   * Platform settings from the environment: app ids and secrets, bot tokens. CRIER_TELEGRAM_BOT_TOKEN is
   * present both under its full name and under its suffix (`BOT_TOKEN`).
   */
  settings: Record<string, string | undefined>;
  log: Logger;
  now(): Date;
}

/** What a successful connect produces: the engine stores it as an account. */
export interface ConnectedIdentity {
  remoteId: string;
  username: string;
  avatarUrl?: string | null;
  credentials: Credentials;
  metadata?: Record<string, unknown>;
}

/** Context of a connect flow (no account exists yet). */
export interface ConnectContext {
  http: ProviderHttp;
  settings: Record<string, string | undefined>;
  log: Logger;
  now(): Date;
  /** The OAuth apps the flow registered on servers the user named (Mastodon); the host always gives it. */
  apps?: ServerApps;
}

/**
 * OAuth apps a connect flow registers itself on a server the user names (Mastodon's POST /api/v1/apps),
 * so that one registration serves every later connect to that server. The host keeps them in this
 * process and, to survive restarts without a table of their own, finds them again in the encrypted
 * credentials of the accounts connected through them: an identity made through a registered app carries
 * it as `credentials.app` and the server as `metadata.server` (the key given here).
 */
export interface ServerApps {
  /** The app registered on this server before (this process, or a connected account's credentials). */
  find(server: string): Promise<Credentials | null>;
  remember(server: string, app: Credentials): void;
  /** Drops the server's app from this process (the server no longer knows it). */
  forget(server: string): void;
}

export interface FormField {
  name: string;
  label: string;
  type: "text" | "password" | "url";
  placeholder?: string;
  help?: string;
}

export type ConnectFlow =
  | {
      mode: "oauth_authorization_url";
      /** Environment variables that must be set for this platform's OAuth app. */
      requiredSettings: string[];
      /**
       * What the user must answer before the authorization URL can be made (Mastodon: which server). With
       * it, connecting answers hosted_url (a page asking these fields); its submission calls `resolve` and
       * sends the browser on to authorizationUrl. Absent: connecting answers authorization_url at once.
       */
      ask?: OAuthQuestion;
      /**
       * codeVerifier: a PKCE verifier derived from the state (send its S256 challenge where the platform wants PKCE).
       * carry: what ask.resolve returned (absent without ask).
       */
      authorizationUrl(
        c: ConnectContext,
        p: { state: string; redirectUri: string; codeVerifier: string; carry?: Record<string, string> },
      ): string;
      /** Several identities when one authorization covers several accounts (every Facebook Page the user picked). */
      exchange(
        c: ConnectContext,
        p: { code: string; redirectUri: string; codeVerifier: string; carry?: Record<string, string> },
      ): Promise<ConnectedIdentity | ConnectedIdentity[]>;
    }
  | {
      mode: "credential_form_url" | "managed_signer" | "remote_signer";
      requiredSettings?: string[];
      /** Text and fields of the hosted page under /connect/. */
      title: string;
      instructions: string;
      fields: FormField[];
      /**
       * Runs each time the page is shown, before the user acts (managed signers: create a signer and get
       * the URL where the user approves it). Its `carry` values come back to verify() with the form,
       * signed together with the state so they cannot be swapped.
       */
      prepare?(c: ConnectContext, attempt: ConnectAttempt): Promise<PreparedConnect>;
      /**
       * Checks what the user entered (plus prepare's carry) against the platform; throws ConnectError with a
       * message to show. The host always passes the attempt; a flow that needs it refuses without one.
       */
      verify(c: ConnectContext, values: Record<string, string>, attempt?: ConnectAttempt): Promise<ConnectedIdentity>;
    };

/** The hosted page an OAuth flow shows before the provider's (ConnectFlow `ask`). */
export interface OAuthQuestion {
  title: string;
  instructions: string;
  fields: FormField[];
  /**
   * Turns the answers into what authorizationUrl and exchange need (Mastodon: the server's address and
   * the app registered there). The result travels encrypted in the flow's signed state, so any copy can
   * finish the flow; throws ConnectError with a message to show the form again.
   */
  resolve(
    c: ConnectContext,
    values: Record<string, string>,
    p: { redirectUri: string },
  ): Promise<Record<string, string>>;
}

/**
 * One connect attempt (one signed state), as prepare() and verify() of a hosted flow see it. `secret` is
 * unguessable, the same on every showing of the attempt's page and on its submission, and different for
 * every attempt: a flow derives a one-time code from it (Telegram's proof of control) without storing one.
 */
export interface ConnectAttempt {
  secret: string;
  expiresAt: Date;
}

export interface PreparedConnect {
  carry: Record<string, string>;
  /** Values to put in the form's fields beforehand (sandbox: a bunker URI the emulator answers). */
  values?: Record<string, string>;
  /** A link the user opens on the way (an approval page); shown as a button. */
  link?: { url: string; label: string };
  /** A short value the user copies elsewhere (a one-time code to post), shown large above the form. */
  code?: { label: string; value: string };
  /**
   * Values to pick from, per field name (Discord: the channels the bot can post in), offered as the
   * field's suggestions; the field still takes any value the user types.
   */
  choices?: Record<string, Choice[]>;
}

/** One suggestion of a hosted form's field: the value it fills in and what the user reads. */
export interface Choice {
  value: string;
  label: string;
}

/**
 * Raised by a connect flow with a message fit to show the user on the hosted page. `code`, when given, is
 * a stable machine-readable name of the refusal (channel_ownership_unproven), shown beside the message.
 */
export class ConnectError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * A media item of a source post. Some platforms hand out the file itself (a blob, a CDN file); others
 * only a page to watch it on (a YouTube watch page, a Vimeo or TikTok link) or a still standing in for a
 * video. A workflow can carry only the first kind: the plugin says which it gave, since it knows what its
 * API returns and the URL alone does not tell.
 */
export interface RecentMedia extends MediaItem {
  /** True when `url` is the media file itself, fetchable through the media guard; false for a page or a stand-in. */
  downloadable: boolean;
}

export interface RecentPost {
  platformPostId: string;
  url: string | null;
  content: string;
  media: RecentMedia[];
  createdAt: Date;
  kind: "text" | "image" | "video" | "quote";
}

/** What the reconciler asks a plugin about a publish whose outcome is unknown. */
export interface FindQuery {
  /** The text that was sent (after content_override). */
  content: string;
  media: MediaItem[];
  /** The target's platform options, as the publish got them. */
  options: Record<string, unknown>;
  /** The post, if created, was created in this window (the attempt's start and end, with some slack). */
  since: Date;
  until: Date;
  /** The attempt's idempotency token, for platforms that can look a post up by it. */
  idempotencyToken: string;
  /** Set for thread items: the post would be a reply to this one. */
  replyTo?: string;
}

/**
 * found: the post exists. absent: the listing that would show it was read and does not (`checked` says
 * what was read). cannot_tell: the platform could not be asked, or its listing cannot show such a post.
 */
export type FindResult =
  | { kind: "found"; platformPostId: string; url: string | null }
  | { kind: "absent"; checked: string }
  | { kind: "cannot_tell"; reason: string };

export interface PostMetrics {
  views: number | null;
  likes: number | null;
  comments: number | null;
  shares: number | null;
  saves: number | null;
  quotes?: number | null;
}

/** The numbers of a post analytics knows; a platform declares which of them it exposes. */
export const METRIC_NAMES = ["views", "likes", "comments", "shares", "saves"] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** What accountStats reads of an account: its audience now (followers, subscribers, members, fans). */
export interface AccountStats {
  followers: number | null;
}

/**
 * media_requirements as a plugin declares them: file_constraints is a free object in the spec; alt_text is
 * derived from the plugin's altText.
 */
export type DeclaredMediaRequirements = Omit<
  MediaRequirements,
  "file_constraints" | "aspect_ratio" | "alt_text" | "first_comment"
> & {
  file_constraints: MediaRequirements["file_constraints"] & Record<string, unknown>;
  aspect_ratio: (AspectRatio & Record<string, unknown>) | null;
};

/**
 * implemented: publish works end to end. declared_only: the declaration (capabilities, limits, options,
 * connect) is true, but publishing is not written yet; the engine refuses targets on such platforms.
 */
export type PluginStatus = "implemented" | "declared_only";

/** What a plugin can be asked to do, as `crier accounts check` reports the scopes each needs. */
export const SCOPED_CAPABILITIES = ["publish", "metrics", "account_stats", "workflow_source", "first_comment"] as const;
export type ScopedCapability = (typeof SCOPED_CAPABILITIES)[number];

/** What a plugin's checkAccount read learnt beyond "the token works". */
export interface AccountCheck {
  /** The scopes the platform says the token has, when it says (else the ones stored at connect count). */
  grantedScopes?: string[];
  /** The API version the plugin calls and whether the platform serves it now. */
  apiVersion?: { value: string; accepted: boolean; note?: string };
}

export interface PluginDefinition<O extends TSchema = TSchema> {
  platform: Platform;
  displayName: string;
  /** Defaults to "implemented" when publish is present, else "declared_only". */
  status?: PluginStatus;
  /** For declared_only plugins: what is still missing, in a few words each (shown in the README). */
  missing?: string[];
  /** The connection mode when `connect` is absent (a flow not written yet); otherwise connect.mode wins. */
  connectionMode?: ConnectionMode;
  /** alt_text comes from `altText`, connection_mode from connect: declared once each. */
  capabilities: Omit<Capabilities, "connection_mode" | "alt_text" | "first_comment">;
  mediaRequirements: DeclaredMediaRequirements;
  /** platform_options accepted on a target. Unknown keys are kept but not forwarded unless the schema forbids them. */
  optionsSchema: O;
  /**
   * Other names clients send for an option (the hosted service's, e.g. YouTube `privacy` for
   * privacy_status), each declared in optionsSchema too. The host rewrites them to the plugin's own name
   * (translating values through `values` when given) before the plugin sees the options, and refuses a
   * target whose alias and own name disagree; the plugin only ever reads its own names.
   */
  optionAliases?: Record<string, { option: string; values?: Record<string, unknown> }>;
  /**
   * The media requirements of one target, where its options choose another surface with rules of its own
   * (an Instagram or Facebook Story or Reel): checked at creation instead of `mediaRequirements`. Gets the
   * options as publish will (aliases resolved, unknown keys dropped). Default: `mediaRequirements`.
   */
  mediaRequirementsFor?(options: Static<O>): DeclaredMediaRequirements;
  /**
   * Rules between a target's options and its content that a schema cannot say (user tags only on an
   * image, collaborators not on a Story; a Google Business event post needs its event), checked at creation
   * after the declaration's and only for options that passed the schema; each problem is a 400 naming the
   * target. `media[i].measured` is what Crier knows of the file (its own upload's facts,
   * else the client's numbers).
   */
  optionProblems?(target: OptionTarget<Static<O>>): OptionProblem[];
  /** Text limit after content_override, and how it is counted. */
  textLimit: {
    max: number;
    unit: TextUnit;
    /** A lower limit when media is attached, where the text becomes a caption (Telegram: 1024). */
    withMediaMax?: number;
    /** A second cap in UTF-8 bytes, for platforms that enforce one beside `unit` (Bluesky: 3000). */
    maxBytes?: number;
    /** A lower limit for the later items of a thread, where they are replies of another kind (Reddit comments: 10,000). */
    replyMax?: number;
  };
  /**
   * Where the platform takes media[].alt_text and how long it may be, per kind of media (null: the platform
   * has no alt text, and the field is ignored). The API shows it as capabilities.alt_text and
   * media_requirements.alt_text; the host refuses a longer text at creation (alt_text_too_long).
   */
  altText: AltTextSupport | null;
  /** The real API's base URL; CRIER_<PLATFORM>_API_URL overrides it (tests point it at the emulator). */
  defaultApiUrl: string;
  /** At most this many publishes at once to this platform, per running copy. */
  concurrency?: number;
  /**
   * Platforms that fan one account target into several publications (Snapchat: Spotlight and a public
   * Story) name every variant they can make here; the API shows them as target_variant.
   */
  variantNames?: readonly string[];
  /** The variants one target fans out into, each one of variantNames; null for a single publication. */
  variants?(options: Static<O>): string[] | null;
  /** Absent while the platform's connect flow is not written: connecting then answers 409. */
  connect?: ConnectFlow;
  /**
   * Recognises the platform's own way of saying "expired token" or "slow down" in a non-2xx answer
   * (Bluesky: 400 ExpiredToken; Telegram: retry_after in the body). Undefined keeps the default mapping.
   */
  classifyResponse?(res: ProviderResponse): FailureOutcome | undefined;
  disconnect?: {
    disableRecord?: boolean;
    providerRevocationRequired?: boolean;
    providerRevocationUrl?: string | null;
    message?: string;
  };
  /**
   * Best-effort remote cleanup when an account is disconnected, called with its credentials before they
   * are cleared (Bluesky: end the session; Telegram: the bot leaves the channel). `remoteStillUsed` is true
   * when another connected account of this server has the same remote id. Errors are logged, never shown.
   */
  onDisconnect?(ctx: PluginContext, p: { remoteStillUsed: boolean }): Promise<void>;
  /** Absent on declared_only plugins. */
  publish?(ctx: PluginContext, job: PublishJob): Promise<Outcome>;
  /**
   * The account's own limits where they differ from account to account (each Mastodon server sets its own),
   * from what connect stored in the account's metadata: shown as that account's media_requirements and
   * checked at creation instead of the declaration's. Undefined keeps the declaration.
   */
  accountLimits?(metadata: Record<string, unknown>): AccountLimits | undefined;
  /** First comments (a target's `first_comment`); absent: the platform takes none and such a target is 400. */
  firstComment?: FirstCommentSupport;
  /**
   * What the server logs as warnings at start about this platform's settings (an API version close to
   * its sunset); asked only of platforms whose required settings are set.
   */
  startupWarnings?(settings: Record<string, string | undefined>, now: Date): string[];
  checkStatus?(ctx: PluginContext, handle: string): Promise<Outcome>;
  /**
   * Returns fresh credentials (also saved through ctx.saveCredentials), or throws when refresh is refused
   * (a RefreshError with retryable=true when the platform could not be reached).
   */
  refresh?(ctx: PluginContext): Promise<Credentials>;
  fetchRecent?(ctx: PluginContext, since: Date | null): Promise<RecentPost[]>;
  /**
   * Whether a post exists on the account, for publishes whose outcome is unknown. Optional: without it a
   * plugin with fetchRecent is asked through findAmongRecent (src/platform/find-published.ts).
   */
  findPublished?(ctx: PluginContext, q: FindQuery): Promise<FindResult>;
  /**
   * The account's listing shows a new post as soon as its creating call returned (read-after-write), so
   * "absent" after a settle delay proves the post was not created and one more attempt is safe.
   * Declare it only where the platform documents it; without it an unknown outcome is never retried.
   */
  listingReadAfterWrite?: boolean;
  metrics?(ctx: PluginContext, platformPostIds: string[]): Promise<Record<string, PostMetrics>>;
  /**
   * Which PostMetrics numbers the platform really exposes: the others are reported as null even when
   * metrics() fills them in (a platform that has no such number must never show 0). Required with metrics.
   */
  metricNames?: readonly MetricName[];
  /**
   * The account's audience as the platform counts it (YouTube subscribers, Page fans, channel members),
   * read at connect and then weekly. Throws like metrics() when the platform refuses; ctx.http's
   * answer tells the engine why.
   */
  accountStats?(ctx: PluginContext): Promise<AccountStats>;
  /**
   * The scopes (permissions, as the platform names them) each capability needs; `crier accounts check`
   * compares them with the ones granted (the token answer's scope, stored at connect). Only for platforms
   * whose tokens carry scopes.
   */
  requiredScopes?: Partial<Record<ScopedCapability, readonly string[]>>;
  /**
   * The platform's cheapest read that proves the token works, for `crier accounts check`. Throws like
   * accountStats() when the platform refuses. Default: accountStats, else fetchRecent of the last hour.
   */
  checkAccount?(ctx: PluginContext): Promise<AccountCheck>;
}

export type Plugin = PluginDefinition<TSchema>;

/** What optionProblems sees of a target. */
export interface OptionTarget<O = Record<string, unknown>> {
  content: string;
  media: (MediaItem & { measured: { width?: number; height?: number; duration?: number } })[];
  options: O;
  /** The target's first_comment, or null. */
  firstComment: string | null;
}

/** One rule a target breaks: `field` is the request field at fault ("platform_options.user_tags"). */
export interface OptionProblem {
  code: string;
  message: string;
  hint: string;
  field: string;
}

/** What one account may take beyond (or short of) its platform's declaration: see `accountLimits`. */
export interface AccountLimits {
  textMax?: number;
  mediaRequirements?: DeclaredMediaRequirements;
}

export function definePlugin<O extends TSchema>(def: PluginDefinition<O>): PluginDefinition<O> {
  return def;
}

/** A failure an emulator is told to produce, for tests of each outcome class. */
export interface FailureSpec {
  /** forbidden: the token lacks a permission (403), where the emulator implements it. */
  kind: "rate_limit" | "server_error" | "timeout" | "auth_expired" | "forbidden";
  /** Which operation fails: a path fragment or method name the emulator recognises (default: the next call). */
  on?: string;
  /** With kind "timeout": hold the response this long after doing the work (default 30 s). */
  delayMs?: number;
  retryAfterSeconds?: number;
  /**
   * With kind "server_error": do the work first, then answer with the error, as a platform that created
   * the post and failed on the way out does.
   */
  afterWork?: boolean;
  /** How many consecutive matching calls fail (default 1). */
  times?: number;
  /**
   * How many matching calls go through before the failure applies (default 0): a post's first comment is
   * made by the same call as the post on some platforms (a reply on X), so `skip: 1` fails the comment.
   * Emulators whose failures go through FailurePlan (emulator-kit.ts) honour it.
   */
  skip?: number;
}

/** What an emulator recorded as published, so tests can count posts on the "platform". */
export interface EmulatedPost {
  id: string;
  text: string;
  /** alt: the description the platform stored with the file, where it takes one. */
  media: { type: string; contentType?: string; size?: number; alt?: string }[];
  replyTo?: string | null;
  options?: Record<string, unknown>;
  createdAt: Date;
}

/**
 * A faithful stand-in for the part of a platform's API that its plugin calls. Served under
 * /sandbox/<platform>/ for sandbox profiles and on a loopback port in tests.
 */
export interface Emulator {
  platform: Platform;
  /** `path` is the request path with the emulator's mount prefix removed, starting with "/". */
  handle(req: Request, path: string): Promise<Response>;
  failNext(spec: FailureSpec): void;
  /**
   * Settings a sandbox profile runs the plugin with (e.g. a bot token the emulator accepts), in the
   * suffix form of CRIER_<PLATFORM>_* names. Optional: without it every required setting is "sandbox".
   */
  sandboxSettings?: Record<string, string>;
  /**
   * Emulators of WebSocket APIs (Nostr relays): one session per connection. `send` delivers a text frame
   * to the client; the returned object receives the client's frames and the close.
   */
  openSocket?(path: string, send: (data: string) => void): { message(data: string): void; close(): void };
  /**
   * Path prefixes of pages a user's browser opens during a sandbox connect (Farcaster's approval link).
   * Emulators are not served to the network: the host serves only these (and the OAuth authorize step),
   * and only to a request carrying the flow's signed state. Links the plugin shows that lead here get
   * that state added by the host.
   */
  browserPaths?: string[];
  posts(): EmulatedPost[];
  /**
   * First comments the emulator received where the platform's comments are not posts (Facebook, YouTube):
   * each with replyTo set to the platformPostId of the post it is under. Emulators of platforms where a
   * first comment is a reply (X, Bluesky) list it in posts() with replyTo instead.
   */
  comments?(): EmulatedPost[];
  /**
   * Everything the emulator remembers (accounts, tokens, posts, id counters), so sandbox profiles keep it
   * in the database across restarts and copies. Emulators without it lose their state on restart.
   */
  state?: EmulatorState;
  /** Sets the audience count every account of the emulator reports (emulators of platforms with accountStats). */
  setFollowers?(count: number): void;
  /**
   * Moves the emulator's clock forward (emulators whose platform ages tokens, as Meta's refresh needs a
   * token at least a day old): tests of such rules age tokens without waiting.
   */
  advanceClock?(ms: number): void;
  reset(): void;
}

export type { EmulatorState };

/** What the host hands an emulator it creates for sandbox profiles. */
export interface EmulatorOptions {
  /**
   * Fetches a media URL the way the platform downloads one it is given (Instagram's image_url, TikTok's
   * PULL_FROM_URL), for emulators to use instead of fetch: the host's version goes through the media
   * guard, so a sandbox cannot make the server reach loopback, private or metadata addresses. Throws
   * when the URL is refused or cannot be fetched. Absent (tests' own emulators): plain fetch.
   */
  pullMedia?: (url: string) => Promise<Response>;
}

/**
 * emulator.ts default-exports `defineEmulator((opts) => ...)`: a factory, so each test (and each sandbox
 * profile) gets fresh state.
 */
export function defineEmulator(factory: (opts?: EmulatorOptions) => Emulator): (opts?: EmulatorOptions) => Emulator {
  return factory;
}
