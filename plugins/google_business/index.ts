/**
 * Google Business Profile: local posts on a business location (a standard update with an optional button,
 * an event, an offer, each with at most one photo), through the Business Profile APIs, all checked
 * 2026-11-26:
 *
 * - connect: Google OAuth with the business.manage scope; the Account Management API lists the user's
 *   accounts (accounts.list) and the Business Information API each account's locations
 *   (accounts.locations.list with a readMask). Every location that can take posts becomes its own Crier
 *   account, its remote id the v4 name `accounts/{accountId}/locations/{locationId}`.
 * - publish: v4 localPosts.create (mybusiness.googleapis.com). A photo goes as a sourceUrl that Google
 *   fetches, so its URL must be publicly reachable (the server's own storage is, at PUBLIC_URL). A post
 *   is PROCESSING until Google has reviewed it: "submitted", then localPosts.get until LIVE or REJECTED.
 * - reads: localPosts.list (workflow source, unknown outcomes), followers.getMetadata (the audience).
 *   Google has no per-post numbers any more: localPosts.reportInsights and the LOCAL_POST_* metrics were
 *   discontinued on 2023-02-20 with no replacement (developers.google.com/my-business/content/sunset-dates),
 *   and the Business Profile Performance API reports a location's daily metrics, not a post's. So no
 *   metrics are declared.
 *
 * Each API lives on its own host; when CRIER_GOOGLE_BUSINESS_API_URL points elsewhere (an emulator, a
 * sandbox) every call goes to that one base, where the paths of the three APIs do not collide.
 * Requests and answers are typed by Google's own contract (./contract.ts). Rules and sources:
 * docs/platforms.md, Google Business Profile.
 */
import {
  ConnectError,
  definePlugin,
  type AccountStats,
  type ConnectContext,
  type ConnectedIdentity,
  type FailureOutcome,
  type FindQuery,
  type FindResult,
  type Outcome,
  type PluginContext,
  type ProviderHttp,
  type PublishJob,
  type RecentPost,
} from "../../src/platform/sdk.ts";
import { findAmongRecent } from "../../src/platform/find-published.ts";
import {
  connectCall,
  oauthFlow,
  refreshAhead,
  tokenCredentials,
  type TokenResponse,
} from "../../src/platform/oauth.ts";
import {
  GOOGLE_AUTHORIZE_URL,
  GOOGLE_OFFLINE_PARAMS,
  GOOGLE_TOKEN_ENDPOINT,
  googleRefresh,
  ungrantedScopes,
} from "../../src/platform/google.ts";
import { MB } from "../../src/platform/limits.ts";
import { classifyGoogle } from "./errors.ts";
import { GoogleBusinessOptions, localPostOf, optionRules } from "./post.ts";
import {
  BUSINESS_MANAGE,
  LIST_ACCOUNTS_PAGE_MAX,
  LIST_LOCATIONS_PAGE_MAX,
  LIST_POSTS_PAGE_MAX,
  type Account,
  type FollowersMetadata,
  type ListAccountsResponse,
  type ListLocalPostsResponse,
  type ListLocationsResponse,
  type LocalPost,
  type Location,
} from "./contract.ts";

/** The v4 API's host, where local posts live: the plugin's base URL. */
const POSTS_HOST = "https://mybusiness.googleapis.com";
const HOSTS = {
  posts: POSTS_HOST,
  accounts: "https://mybusinessaccountmanagement.googleapis.com",
  locations: "https://mybusinessbusinessinformation.googleapis.com",
} as const;

/** A summary is at most 1,500 characters (support.google.com/business/answer/7662907, checked 2026-11-26). */
const SUMMARY_MAX = 1500;
/** Connect reads at most this many pages of accounts and of each account's locations. */
const MAX_PAGES = 20;
/** What connect reads of a location (Business Information's readMask is required). */
const READ_MASK = "name,title,storefrontAddress,metadata";

/** The URL of a call to one of the APIs: its own host in production, the one overridden base otherwise. */
function at(http: ProviderHttp, api: keyof typeof HOSTS, path: string): string {
  return http.baseUrl.replace(/\/+$/, "") === POSTS_HOST ? `${HOSTS[api]}${path}` : path;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const auth = (ctx: PluginContext) => bearer(String(ctx.credentials.access_token));

const refresh = googleRefresh("Business Profile");

/** Every page of a list, up to MAX_PAGES. */
async function allPages<T>(
  next: (pageToken?: string) => Promise<{ items: T[]; nextPageToken?: string }>,
): Promise<T[]> {
  const out: T[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await next(token);
    out.push(...res.items);
    token = res.nextPageToken;
    if (!token) break;
  }
  return out;
}

/** The location's address on one line, for telling same-named locations apart. */
const addressOf = (l: Location) =>
  [...(l.storefrontAddress?.addressLines ?? []), l.storefrontAddress?.locality].filter(Boolean).join(", ");

/** Every Business Profile account the user owns or manages (accounts.list; the personal one first). */
async function listAccounts(c: ConnectContext, headers: Record<string, string>) {
  return allPages(async (pageToken) => {
    const res = await connectCall<ListAccountsResponse>(
      c,
      "Listing your Business Profile accounts",
      "GET",
      at(c.http, "accounts", "/v1/accounts"),
      { query: { pageSize: LIST_ACCOUNTS_PAGE_MAX, pageToken }, headers },
    );
    return { items: res.accounts ?? [], nextPageToken: res.nextPageToken };
  });
}

/** An account's locations, with the fields READ_MASK names (accounts.locations.list). */
async function listLocations(c: ConnectContext, account: Account, headers: Record<string, string>) {
  return allPages(async (pageToken) => {
    const res = await connectCall<ListLocationsResponse>(
      c,
      `Listing the locations of ${account.accountName ?? account.name}`,
      "GET",
      at(c.http, "locations", `/v1/${account.name}/locations`),
      { query: { readMask: READ_MASK, pageSize: LIST_LOCATIONS_PAGE_MAX, pageToken }, headers },
    );
    return { items: res.locations ?? [], nextPageToken: res.nextPageToken };
  });
}

/** One location as a Crier account: its v4 name is the remote id. */
function identityOf(
  account: Account & { name: string },
  l: Location & { name: string },
  token: TokenResponse,
  now: Date,
) {
  const locationId = l.name.slice(l.name.lastIndexOf("/") + 1);
  return {
    remoteId: `${account.name}/locations/${locationId}`,
    username: l.title ?? l.name,
    avatarUrl: null,
    credentials: tokenCredentials(token, now),
    metadata: {
      account: account.name,
      account_name: account.accountName ?? null,
      location: l.name,
      address: addressOf(l) || null,
      maps_uri: l.metadata?.mapsUri ?? null,
      place_id: l.metadata?.placeId ?? null,
    },
  } satisfies ConnectedIdentity;
}

/** A chain's locations often share a title: the address tells them apart in the account list. */
function distinguish(found: ConnectedIdentity[]): void {
  const titles = found.map((f) => f.username);
  const shared = new Set(titles.filter((t, i) => titles.indexOf(t) !== i));
  for (const f of found)
    if (shared.has(f.username) && f.metadata?.address) f.username = `${f.username} (${String(f.metadata.address)})`;
}

/** The user's accounts, then every location of each that can take posts: one identity per location. */
async function identities(c: ConnectContext, token: TokenResponse): Promise<ConnectedIdentity[]> {
  if (ungrantedScopes(token, [[BUSINESS_MANAGE]]).length)
    throw new ConnectError(
      "Google did not grant managing your Business Profile. Connect again and leave that permission ticked on Google's consent screen.",
    );
  const headers = bearer(token.access_token);
  const seen = new Set<string>();
  const found: ConnectedIdentity[] = [];
  let closed = 0;
  for (const account of await listAccounts(c, headers)) {
    if (!account.name) continue;
    for (const l of await listLocations(c, account, headers)) {
      // A location reached through several accounts (the owner's and a location group) is connected once.
      if (!l.name || seen.has(l.name)) continue;
      seen.add(l.name);
      // "Indicates if the listing can manage local posts": one that cannot is no destination for Crier.
      if (l.metadata?.canOperateLocalPost === false) closed++;
      else found.push(identityOf({ ...account, name: account.name }, { ...l, name: l.name }, token, c.now()));
    }
  }
  if (!found.length)
    throw new ConnectError(
      closed
        ? "None of the Business Profile locations this Google account manages can take posts (Google reports them unable to manage local posts: verify them in Business Profile first)."
        : "This Google account manages no Business Profile location. Add or claim one at business.google.com, then connect again.",
    );
  distinguish(found);
  return found;
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const stale = await refreshAhead(ctx, refresh);
  if (stale) return stale;
  const res = await ctx.http.request<LocalPost>(
    "POST",
    at(ctx.http, "posts", `/v4/${ctx.account.remoteId}/localPosts`),
    {
      headers: auth(ctx),
      json: localPostOf(job),
      // localPosts.create takes no request id: a post may exist after a timeout or a 5xx.
      creates: true,
    },
  );
  if (!res.ok) return res.outcome;
  if (!res.body?.name) return { kind: "unknown", reason: "Google took the post but named no local post" };
  return settled(res.body);
}

/** What a post's state comes to: LIVE published, REJECTED refused, anything else still being reviewed. */
function settled(post: LocalPost): Outcome {
  const name = post.name!;
  if (post.state === "REJECTED")
    return {
      kind: "permanent",
      reason: "Google rejected the post under its content policies for Business Profile posts.",
      code: "post_rejected",
    };
  if (post.state === "LIVE") return { kind: "published", platformPostId: name, url: post.searchUrl ?? null };
  return { kind: "submitted", handle: name };
}

async function checkStatus(ctx: PluginContext, name: string): Promise<Outcome> {
  const res = await ctx.http.request<LocalPost>("GET", at(ctx.http, "posts", `/v4/${name}`), { headers: auth(ctx) });
  if (!res.ok) {
    if (res.status === 404)
      return { kind: "permanent", reason: "Google no longer knows the post it was reviewing", code: "post_missing" };
    return res.outcome.kind === "retryable" ? { kind: "submitted", handle: name } : res.outcome;
  }
  return settled({ ...res.body, name });
}

/** The location's posts, newest first as Google lists them, in every state. */
async function listPosts(ctx: PluginContext, since: Date | null): Promise<LocalPost[]> {
  const posts: LocalPost[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await ctx.http.request<ListLocalPostsResponse>(
      "GET",
      at(ctx.http, "posts", `/v4/${ctx.account.remoteId}/localPosts`),
      { query: { pageSize: LIST_POSTS_PAGE_MAX, pageToken }, headers: auth(ctx) },
    );
    if (!res.ok) throw new Error(`Google Business Profile posts: ${res.outcome.reason}`);
    const batch = res.body.localPosts ?? [];
    posts.push(...batch);
    pageToken = res.body.nextPageToken;
    const oldest = batch.at(-1)?.createTime;
    if (!pageToken || (since && oldest && new Date(oldest) < since)) break;
  }
  return posts;
}

const recentPost = (p: LocalPost): RecentPost => {
  const media = (p.media ?? [])
    .filter((m) => m.mediaFormat === "PHOTO" && (m.googleUrl ?? m.sourceUrl))
    // googleUrl is the file as Google hosts it.
    .map((m) => ({ url: (m.googleUrl ?? m.sourceUrl)!, type: "image" as const, downloadable: true }));
  return {
    platformPostId: p.name!,
    url: p.searchUrl ?? null,
    content: p.summary ?? "",
    media,
    createdAt: new Date(p.createTime ?? Date.now()),
    kind: media.length ? "image" : "text",
  };
};

/** What a workflow may copy: the posts showing on Google (not those still in review or rejected). */
async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  return (await listPosts(ctx, since))
    .filter((p) => p.name && (p.state === "LIVE" || p.state === "RECURRING"))
    .map(recentPost)
    .filter((p) => !since || p.createdAt > since);
}

/** A post of unknown outcome exists in whatever state Google holds it, so every state counts. */
function findPublished(ctx: PluginContext, q: FindQuery): Promise<FindResult> {
  return findAmongRecent(ctx, q, async (c, since) => (await listPosts(c, since)).filter((p) => p.name).map(recentPost));
}

/** The location's followers (FollowersMetadata.count, an int64 as a string). */
async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<FollowersMetadata>(
    "GET",
    at(ctx.http, "posts", `/v4/${ctx.account.remoteId}/followers/metadata`),
    { headers: auth(ctx) },
  );
  if (!res.ok) throw new Error(`Google Business Profile followers: ${res.outcome.reason}`);
  return { followers: res.body.count === undefined ? null : Number(res.body.count) };
}

export default definePlugin({
  platform: "google_business",
  displayName: "Google Business Profile",
  defaultApiUrl: POSTS_HOST,
  textLimit: { max: SUMMARY_MAX, unit: "characters" },
  // "sourceUrl is the only supported data field for a LocalPost MediaItem": a photo's description is not
  // taken on a post, so media[].alt_text is ignored.
  altText: null,
  capabilities: {
    destination: true,
    source: true,
    backfill: true,
    text: true,
    images: true,
    video: false,
    replies: false,
    threads: false,
  },
  mediaRequirements: {
    // Photos: JPG or PNG, 10 KB to 5 MB, at least 250 x 250 pixels (support.google.com/business/answer/6103862,
    // checked 2026-11-26). The 10 KB floor is not checked at creation (a URL's size is unknown until fetched).
    supported_formats: ["image/jpeg", "image/png"],
    convertible_formats: { "image/webp": "image/jpeg" },
    max_size_bytes: { image: 5 * MB, video: 0, gif: 0 },
    file_constraints: {
      maxFiles: 1,
      maxImageFiles: 1,
      maxVideoFiles: 0,
      maxGifFiles: 0,
      allowMixedMedia: false,
      gifBehavior: "not supported",
      minImageWidth: 250,
      minImageHeight: 250,
      mediaUrls: "must be publicly reachable (Google fetches the photo from its URL)",
    },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: GoogleBusinessOptions,
  optionProblems: (target) =>
    optionRules(target.options).map((r) => ({
      code: "invalid_platform_options",
      field: `platform_options.${r.field}`,
      message: r.message,
      hint: "See the platform_options Google Business Profile accepts (GoogleBusinessOptions) in /openapi.json.",
    })),
  requiredScopes: {
    publish: [BUSINESS_MANAGE],
    account_stats: [BUSINESS_MANAGE],
    workflow_source: [BUSINESS_MANAGE],
  },
  connect: oauthFlow({
    authorizeUrl: GOOGLE_AUTHORIZE_URL,
    ...GOOGLE_TOKEN_ENDPOINT,
    pkce: true,
    // business.manage is the one scope every method used takes (their Authorization scopes).
    scopes: [BUSINESS_MANAGE],
    extraAuthorizeParams: GOOGLE_OFFLINE_PARAMS,
    identity: identities,
  }),
  classifyResponse: (res): FailureOutcome | undefined => classifyGoogle(res),
  publish,
  checkStatus,
  refresh,
  fetchRecent,
  findPublished,
  accountStats,
});
