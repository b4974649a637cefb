/**
 * An emulator of the Google Business Profile surface the plugin uses, the three APIs under one base: Google
 * OAuth (authorize with PKCE, token, one-hour access tokens, kept refresh tokens, granular consent),
 * Account Management accounts.list, Business Information accounts.locations.list (readMask required),
 * and v4 localPosts create, get and list plus followers.getMetadata. Every create is held to Google's
 * contract (./contract.ts) and to the rules of the reference (./emulator-rules.ts: a too-long summary, an
 * invalid call to action, an event without its schedule, a photo Google cannot fetch); each call checks
 * the token and its business.manage scope. A new post is PROCESSING and is reviewed (LIVE, or REJECTED
 * after setReview("rejected")) when it is next read. Errors are google.rpc.Status. Rules and sources:
 * docs/platforms.md, Google Business Profile.
 *
 * Sandbox rule: client "sandbox"/"sandbox"; every authorization is one user whose personal account
 * manages one location, "Sandbox Bakery".
 */
import { randomBytes } from "node:crypto";
import {
  defineEmulator,
  type EmulatedPost,
  type Emulator,
  type EmulatorOptions,
  type FailureSpec,
} from "../../src/platform/sdk.ts";
import { failingHandler, FailurePlan, resettable, emulatorState } from "../../src/platform/emulator-kit.ts";
import { googleOAuthServer } from "../../src/platform/google-emulator.ts";
import {
  BUSINESS_MANAGE,
  LIST_ACCOUNTS_PAGE_MAX,
  LIST_LOCATIONS_PAGE_MAX,
  LIST_POSTS_PAGE_MAX,
  LOCATION_FIELDS,
  PLUS_BUSINESS_MANAGE,
  SCOPES,
  type Account,
  type ListAccountsResponse,
  type ListLocalPostsResponse,
  type ListLocationsResponse,
  type LocalPost,
  type Location,
} from "./contract.ts";
import { checkFields, conform, fetchPhotos, GoogleApiError } from "./emulator-rules.ts";

interface EmulatedAccount {
  name: string;
  accountName: string;
  type: NonNullable<Account["type"]>;
}
interface EmulatedLocation {
  id: string;
  /** The accounts it is reached through (its owner's, a location group's). */
  accounts: string[];
  title: string;
  street: string;
  locality: string;
  canPost: boolean;
}
interface StoredPost {
  post: LocalPost;
  parent: string;
  createdAt: Date;
  reviewed: boolean;
}

export interface GoogleBusinessEmulator extends Emulator {
  /** Another account the user manages; returns its name (accounts/…). */
  addAccount(accountName: string, type?: EmulatedAccount["type"]): string;
  /** Another location, in the user's first account unless named; returns its v4 name (accounts/…/locations/…). */
  addLocation(title: string, p?: { account?: string; alsoIn?: string[]; canPost?: boolean; street?: string }): string;
  /** The user manages no location any more (a new Business Profile user). */
  clearLocations(): void;
  /** How the review of the posts created from now on ends: live (default) or rejected under Google's policies. */
  setReview(outcome: "live" | "rejected"): void;
  /** The user grants only these of the requested scopes at the next consents (null: all requested). */
  grantOnly(scopes: string[] | null): void;
  expireTokens(): void;
  /** The last localPosts.create bodies received (up to 100), as sent, refused ones included. */
  received(): unknown[];
}

const GOOGLE_ERROR = (e: GoogleApiError) => ({
  error: {
    code: e.status,
    message: e.message,
    status: e.rpcStatus,
    ...(e.details.length && { details: e.details }),
  },
});

const unauthenticated = () =>
  new GoogleApiError(
    401,
    "UNAUTHENTICATED",
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
  );
const insufficientScope = () =>
  new GoogleApiError(403, "PERMISSION_DENIED", "Request had insufficient authentication scopes.", [
    {
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
      domain: "googleapis.com",
    },
  ]);
const notFound = () => new GoogleApiError(404, "NOT_FOUND", "Requested entity was not found.");
const badArgument = (message = "Request contains an invalid argument.") =>
  new GoogleApiError(400, "INVALID_ARGUMENT", message);

/** How many localPosts.create bodies received() keeps. */
const RECEIVED_KEPT = 100;

/** pageSize as Google reads it: default when absent, at most the maximum; pageToken an offset we issued. */
function page<T>(all: T[], url: URL, dflt: number, max: number): { items: T[]; next?: string } {
  const size = Math.min(Number(url.searchParams.get("pageSize") ?? dflt) || dflt, max);
  const token = url.searchParams.get("pageToken");
  const from = token ? Number(Buffer.from(token, "base64url").toString()) : 0;
  if (!Number.isInteger(from) || from < 0) throw badArgument("Invalid page token.");
  const items = all.slice(from, from + size);
  return { items, ...(from + size < all.length && { next: Buffer.from(String(from + size)).toString("base64url") }) };
}

export function createGoogleBusinessEmulator(opts: EmulatorOptions = {}): GoogleBusinessEmulator {
  const failures = new FailurePlan();
  const oauth = googleOAuthServer([BUSINESS_MANAGE, PLUS_BUSINESS_MANAGE]);
  const state = resettable(() => ({
    accounts: [
      { name: "accounts/106000000000000000001", accountName: "Sandbox Owner", type: "PERSONAL" },
    ] as EmulatedAccount[],
    locations: [
      {
        id: "4200000000000000001",
        accounts: ["accounts/106000000000000000001"],
        title: "Sandbox Bakery",
        street: "1 Main St",
        locality: "Springfield",
        canPost: true,
      },
    ] as EmulatedLocation[],
    posts: [] as StoredPost[],
    emulated: [] as EmulatedPost[],
    received: [] as unknown[],
    review: "live" as "live" | "rejected",
    followers: 1000,
    nextId: 1,
  }));

  function requireScope(req: Request, method: string) {
    if (!oauth.bearer(req)) throw unauthenticated();
    if (!SCOPES[method].some((s) => oauth.granted(req, s))) throw insufficientScope();
  }

  const newId = (digits: number) => String(state.nextId++).padStart(digits, "0");

  /** The location a v4 name names, reached through that account; 404 otherwise. */
  function locationAt(account: string, locationId: string): EmulatedLocation {
    const l = state.locations.find((x) => x.id === locationId && x.accounts.includes(`accounts/${account}`));
    if (!l) throw notFound();
    return l;
  }

  /** A post is reviewed when it is next read after its creation. */
  function review(s: StoredPost): LocalPost {
    if (!s.reviewed) {
      s.reviewed = true;
      s.post.state = state.review === "rejected" ? "REJECTED" : "LIVE";
    }
    return s.post;
  }

  function locationJson(l: EmulatedLocation, mask: string[]): Location {
    const full: Location = {
      name: `locations/${l.id}`,
      title: l.title,
      storefrontAddress: { regionCode: "US", locality: l.locality, addressLines: [l.street] },
      metadata: {
        canOperateLocalPost: l.canPost,
        placeId: `ChIJsandbox${l.id}`,
        mapsUri: `https://maps.google.com/maps?cid=${l.id}`,
        hasVoiceOfMerchant: l.canPost,
      },
    };
    return Object.fromEntries(Object.entries(full).filter(([k]) => mask.includes(k))) as Location;
  }

  async function createPost(req: Request, parent: string, location: EmulatedLocation): Promise<Response> {
    const raw = await req.text();
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw badArgument("Invalid JSON payload received.");
    }
    // The last bodies only: a sandbox profile's emulator state is saved with every call.
    state.received = [...state.received.slice(-(RECEIVED_KEPT - 1)), body];
    const sent = conform(body);
    checkFields(sent);
    if (!location.canPost)
      throw new GoogleApiError(400, "FAILED_PRECONDITION", "The location is disabled for the local post API.");
    const photos = await fetchPhotos(sent, opts.pullMedia);
    const id = randomBytes(8).toString("hex");
    const now = new Date();
    // Output-only fields sent are ignored; Google sets them.
    const post: LocalPost = {
      ...sent,
      name: `${parent}/localPosts/${id}`,
      createTime: now.toISOString(),
      updateTime: now.toISOString(),
      state: "PROCESSING",
      searchUrl: `https://local.google.com/place?id=${location.id}&use=posts&lpsid=${id}`,
      ...(sent.media && {
        media: sent.media.map((m, i) => ({
          name: `${parent}/media/${id}-${i}`,
          mediaFormat: m.mediaFormat,
          sourceUrl: m.sourceUrl,
          googleUrl: `https://lh3.googleusercontent.com/p/${id}-${i}`,
        })),
      }),
    };
    state.posts.push({ post, parent, createdAt: now, reviewed: false });
    state.emulated.push({
      id: post.name!,
      text: sent.summary ?? "",
      media: photos.map((p) => ({ type: "image", contentType: p.contentType, size: p.size })),
      options: {
        topic_type: sent.topicType,
        ...(sent.callToAction && { call_to_action: sent.callToAction }),
        ...(sent.event && { event: sent.event }),
        ...(sent.offer && { offer: sent.offer }),
      },
      createdAt: now,
    });
    return Response.json(post);
  }

  async function route(req: Request, path: string): Promise<Response> {
    const url = new URL(req.url);
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize")
      return oauth.authorize(url, () => badArgument("client_id and redirect_uri are required"));
    if (m === "POST" && (path === "/oauth/token" || path === "/token")) return oauth.token(req);

    if (m === "GET" && path === "/v1/accounts") {
      requireScope(req, "accounts.list");
      const { items, next } = page(state.accounts, url, LIST_ACCOUNTS_PAGE_MAX, LIST_ACCOUNTS_PAGE_MAX);
      return Response.json({
        accounts: items.map((a) => ({ name: a.name, accountName: a.accountName, type: a.type, role: "OWNER" })),
        ...(next && { nextPageToken: next }),
      } satisfies ListAccountsResponse);
    }
    const locations = /^\/v1\/(accounts\/[^/]+)\/locations$/.exec(path);
    if (m === "GET" && locations) {
      requireScope(req, "accounts.locations.list");
      // "readMask: Required."
      const mask = (url.searchParams.get("readMask") ?? "").split(",").map((f) => f.trim().split(".")[0]);
      if (!mask[0]) throw badArgument("Request contains an invalid argument: read_mask is required.");
      const unknown = mask.find((f) => !LOCATION_FIELDS.includes(f));
      if (unknown) throw badArgument(`Invalid field mask: ${unknown} is not a field of Location.`);
      if (!state.accounts.some((a) => a.name === locations[1])) throw notFound();
      const mine = state.locations.filter((l) => l.accounts.includes(locations[1]));
      const { items, next } = page(mine, url, 10, LIST_LOCATIONS_PAGE_MAX);
      return Response.json({
        locations: items.map((l) => locationJson(l, mask)),
        ...(next && { nextPageToken: next }),
      } satisfies ListLocationsResponse);
    }

    const v4 = /^\/v4\/accounts\/([^/]+)\/locations\/([^/]+)\/(localPosts|followers\/metadata)(?:\/([^/]+))?$/.exec(
      path,
    );
    if (!v4) throw notFound();
    const [, account, locationId, what, postId] = v4;
    const parent = `accounts/${account}/locations/${locationId}`;
    if (what === "followers/metadata" && m === "GET" && !postId) {
      requireScope(req, "followers.getMetadata");
      locationAt(account, locationId);
      return Response.json({ name: `${parent}/followers/metadata`, count: String(state.followers) });
    }
    if (what !== "localPosts") throw notFound();
    if (m === "POST" && !postId) {
      requireScope(req, "localPosts.create");
      return createPost(req, parent, locationAt(account, locationId));
    }
    if (m === "GET" && postId) {
      requireScope(req, "localPosts.get");
      locationAt(account, locationId);
      const s = state.posts.find((p) => p.post.name === `${parent}/localPosts/${postId}`);
      if (!s) throw notFound();
      return Response.json(review(s));
    }
    if (m === "GET") {
      requireScope(req, "localPosts.list");
      locationAt(account, locationId);
      const mine = state.posts.filter((p) => p.parent === parent).reverse();
      const { items, next } = page(mine, url, 20, LIST_POSTS_PAGE_MAX);
      return Response.json({
        localPosts: items.map(review),
        ...(next && { nextPageToken: next }),
      } satisfies ListLocalPostsResponse);
    }
    throw notFound();
  }

  function failureResponse(f: FailureSpec): Response | null {
    const answer = (e: GoogleApiError, headers: Record<string, string> = {}) =>
      Response.json(GOOGLE_ERROR(e), { status: e.status, headers });
    if (f.kind === "rate_limit")
      return answer(new GoogleApiError(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Requests'."), {
        "retry-after": String(f.retryAfterSeconds ?? 60),
      });
    if (f.kind === "server_error")
      return answer(new GoogleApiError(503, "UNAVAILABLE", "The service is currently unavailable."));
    if (f.kind === "forbidden") return answer(insufficientScope());
    if (f.kind === "auth_expired") {
      oauth.expireAll();
      return answer(unauthenticated());
    }
    return null;
  }

  return {
    platform: "google_business",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => path !== "/token" && !path.startsWith("/oauth"),
      failureResponse,
      route,
      error: GoogleApiError,
      errorResponse: (e) => Response.json(GOOGLE_ERROR(e), { status: e.status }),
    }),
    posts: () => [...state.emulated],
    setFollowers(n) {
      state.followers = n;
    },
    reset() {
      failures.clear();
      oauth.reset();
      state.reset();
    },
    addAccount(accountName, type = "LOCATION_GROUP") {
      const name = `accounts/${newId(21)}`;
      state.accounts.push({ name, accountName, type });
      return name;
    },
    addLocation(title, p = {}) {
      const account = p.account ?? state.accounts[0].name;
      const id = newId(19);
      state.locations.push({
        id,
        accounts: [account, ...(p.alsoIn ?? [])],
        title,
        street: p.street ?? "1 Main St",
        locality: "Springfield",
        canPost: p.canPost ?? true,
      });
      return `${account}/locations/${id}`;
    },
    clearLocations() {
      state.locations = [];
    },
    setReview(outcome) {
      state.review = outcome;
    },
    grantOnly: (scopes) => oauth.grantOnly(scopes),
    expireTokens: () => oauth.expireAll(),
    received: () => [...state.received],
  };
}

export default defineEmulator((opts) => createGoogleBusinessEmulator(opts));
