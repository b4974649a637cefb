/**
 * The OAuth 2 authorization-code flow most platforms share: the authorization URL, the code exchange at
 * the token endpoint, and the identity call each plugin supplies. Endpoints can be overridden with
 * CRIER_<PLATFORM>_AUTHORIZE_URL and CRIER_<PLATFORM>_TOKEN_URL (sandbox profiles and tests use that).
 */
import { createHash } from "node:crypto";
import {
  ConnectError,
  RefreshError,
  type ConnectContext,
  type ConnectedIdentity,
  type ConnectFlow,
  type Credentials,
  type FailureOutcome,
  type PluginContext,
} from "./sdk.ts";

export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
  token_type?: string;
  [k: string]: unknown;
}

export interface OAuthSpec {
  authorizeUrl: string;
  tokenUrl: string;
  /** The scopes asked for; a function when settings decide (a permission only some apps are granted). */
  scopes: string[] | ((settings: Record<string, string | undefined>) => string[]);
  scopeSeparator?: string;
  /** TikTok calls it client_key. */
  clientIdParam?: string;
  /** The setting holding the client id (default CLIENT_ID; TikTok: CLIENT_KEY). */
  clientIdSetting?: string;
  pkce?: boolean;
  /** How the token endpoint wants the client authenticated: HTTP Basic, or id and secret in the body. */
  clientAuth: "basic" | "body";
  tokenMethod?: "POST" | "GET";
  extraAuthorizeParams?: Record<string, string>;
  /** Names (suffixes of CRIER_<PLATFORM>_) that must be set; default CLIENT_ID and CLIENT_SECRET. */
  requiredSettings?: string[];
  /** Turns the token answer into the connected account(s) (usually one "who am I" call). */
  identity(c: ConnectContext, token: TokenResponse): Promise<ConnectedIdentity | ConnectedIdentity[]>;
  /**
   * Headers the platform wants on every call of the flow (Reddit: a User-Agent naming the app), sent with
   * the code exchange and the refresh grant as well as the plugin's own calls; built from the settings.
   */
  headers?(settings: Record<string, string | undefined>): Record<string, string>;
}

/** What the code exchange and the refresh grant share: where the token endpoint is and how the client signs in there. */
export type TokenEndpoint = Pick<
  OAuthSpec,
  "tokenUrl" | "clientAuth" | "clientIdParam" | "clientIdSetting" | "headers"
>;

/** The client's id and secret as the token endpoint wants them: HTTP Basic (RFC 6749 §2.3.1) or form fields. */
function clientAuthentication(
  spec: TokenEndpoint,
  settings: Record<string, string | undefined>,
): { form: Record<string, string>; headers: Record<string, string> } {
  const id = settings[spec.clientIdSetting ?? "CLIENT_ID"] ?? "";
  const secret = settings.CLIENT_SECRET ?? "";
  if (spec.clientAuth === "body")
    return { form: { [spec.clientIdParam ?? "client_id"]: id, client_secret: secret }, headers: {} };
  return {
    form: {},
    headers: {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`,
    },
  };
}

/** The Authorization header of an OAuth-connected account's API calls. */
export const bearerAuth = (ctx: PluginContext) => ({ authorization: `Bearer ${String(ctx.credentials.access_token)}` });

export const pkceChallenge = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/**
 * The refresh token's lifetime in seconds where the platform gives one: refresh_expires_in (TikTok),
 * refresh_token_expires_in (LinkedIn, Pinterest).
 */
const refreshLifetime = (token: TokenResponse): number | undefined =>
  [token.refresh_expires_in, token.refresh_token_expires_in].find((v): v is number => typeof v === "number");

/** Credentials as stored: the token answer with its expiries made absolute. */
export function tokenCredentials(token: TokenResponse, now: Date, extra: Credentials = {}): Credentials {
  const refreshFor = token.refresh_token ? refreshLifetime(token) : undefined;
  return {
    access_token: token.access_token,
    ...(token.refresh_token && { refresh_token: token.refresh_token }),
    ...(typeof token.expires_in === "number" && {
      expires_at: new Date(now.getTime() + token.expires_in * 1000).toISOString(),
    }),
    ...(refreshFor !== undefined && { refresh_expires_at: new Date(now.getTime() + refreshFor * 1000).toISOString() }),
    ...(token.scope && { scope: token.scope }),
    ...extra,
  };
}

/** One call whose failure becomes a message for the connect result page. */
export async function connectCall<T>(
  c: ConnectContext,
  what: string,
  method: string,
  url: string,
  opts: Parameters<ConnectContext["http"]["request"]>[2] = {},
): Promise<T> {
  const res = await c.http.request<T>(method, url, opts);
  if (!res.ok) throw new ConnectError(`${what} failed: ${res.outcome.reason}`);
  return res.body;
}

export function oauthFlow(spec: OAuthSpec): ConnectFlow {
  const required = spec.requiredSettings ?? ["CLIENT_ID", "CLIENT_SECRET"];
  return {
    mode: "oauth_authorization_url",
    requiredSettings: required,
    authorizationUrl(c, p) {
      const url = new URL(c.settings.AUTHORIZE_URL ?? spec.authorizeUrl);
      url.searchParams.set(spec.clientIdParam ?? "client_id", c.settings[spec.clientIdSetting ?? "CLIENT_ID"] ?? "");
      url.searchParams.set("redirect_uri", p.redirectUri);
      url.searchParams.set("response_type", "code");
      const scopes = typeof spec.scopes === "function" ? spec.scopes(c.settings) : spec.scopes;
      url.searchParams.set("scope", scopes.join(spec.scopeSeparator ?? " "));
      url.searchParams.set("state", p.state);
      if (spec.pkce) {
        url.searchParams.set("code_challenge", pkceChallenge(p.codeVerifier));
        url.searchParams.set("code_challenge_method", "S256");
      }
      for (const [k, v] of Object.entries(spec.extraAuthorizeParams ?? {})) url.searchParams.set(k, v);
      return url.toString();
    },
    async exchange(c, p) {
      const client = clientAuthentication(spec, c.settings);
      const form: Record<string, string> = {
        grant_type: "authorization_code",
        code: p.code,
        redirect_uri: p.redirectUri,
        ...(spec.pkce && { code_verifier: p.codeVerifier }),
        ...client.form,
      };
      const headers = { ...spec.headers?.(c.settings), ...client.headers };
      const tokenUrl = c.settings.TOKEN_URL ?? spec.tokenUrl;
      const token =
        spec.tokenMethod === "GET"
          ? await connectCall<TokenResponse>(c, "Exchanging the authorization code", "GET", tokenUrl, {
              query: form,
              headers,
            })
          : await connectCall<TokenResponse>(c, "Exchanging the authorization code", "POST", tokenUrl, {
              form,
              headers,
            });
      if (!token || typeof token.access_token !== "string")
        throw new ConnectError("The platform answered the code exchange without an access token.");
      return spec.identity(c, token);
    },
  };
}

export interface RefreshGrant extends TokenEndpoint {
  /** The platform as its users know it, for messages ("Google"). */
  name: string;
  /** What was connected, for the reconnect hint: account (default), channel, profile. */
  holder?: string;
  /** Fields the platform wants besides the grant (Pinterest: continuous_refresh). */
  form?: Record<string, string>;
}

/**
 * A plugin's refresh(): the refresh_token grant (RFC 6749 §6) at the platform's token endpoint, saved
 * before it is returned. Platforms that rotate refresh tokens spend the old one, so the new pair is saved
 * first; platforms that keep it send none back, and the stored one is kept. A platform that cannot be
 * asked now (network, 5xx, 429) is a retryable RefreshError; any other refusal means reconnecting.
 */
export function refreshTokenGrant(grant: RefreshGrant): (ctx: PluginContext) => Promise<Credentials> {
  const holder = grant.holder ?? "account";
  return async (ctx) => {
    const refreshToken = ctx.credentials.refresh_token;
    if (typeof refreshToken !== "string")
      throw new RefreshError(`no refresh token is stored for this ${grant.name} ${holder}; connect it again`, false);
    const client = clientAuthentication(grant, ctx.settings);
    const res = await ctx.http.request<TokenResponse>("POST", ctx.settings.TOKEN_URL ?? grant.tokenUrl, {
      form: { grant_type: "refresh_token", refresh_token: refreshToken, ...grant.form, ...client.form },
      headers: { ...grant.headers?.(ctx.settings), ...client.headers },
    });
    if (!res.ok && (res.outcome.kind === "retryable" || res.outcome.kind === "unknown"))
      throw new RefreshError(`${grant.name} could not refresh the token now: ${res.outcome.reason}`, true);
    // Some platforms (Reddit, TikTok) refuse with a 200 whose body has no token.
    if (!res.ok || typeof res.body?.access_token !== "string") {
      const why = res.ok ? "" : `: ${res.outcome.reason}`;
      throw new RefreshError(`${grant.name} refused to refresh the token (reconnect the ${holder})${why}`, false);
    }
    const next = tokenCredentials(res.body, ctx.now(), { refresh_token: res.body.refresh_token ?? refreshToken });
    await ctx.saveCredentials(next);
    return next;
  };
}

/** How long before its expiry a token is refreshed ahead of a publish, so no call meets it expiring. */
export const REFRESH_MARGIN_MS = 60_000;

/**
 * Refreshes the token before publishing when it expires within the margin (platforms whose upload is
 * several calls, where a token expiring half-way would leave the work half done). Null when the token is
 * good or was refreshed; otherwise the outcome the attempt ends with.
 */
export async function refreshAhead(
  ctx: PluginContext,
  refresh: (ctx: PluginContext) => Promise<Credentials>,
): Promise<FailureOutcome | null> {
  const expires = Date.parse(String(ctx.credentials.expires_at ?? ""));
  if (!Number.isFinite(expires) || expires - ctx.now().getTime() > REFRESH_MARGIN_MS || !ctx.credentials.refresh_token)
    return null;
  try {
    await refresh(ctx);
    return null;
  } catch (e) {
    return e instanceof RefreshError && e.retryable
      ? { kind: "retryable", reason: e.message }
      : { kind: "auth_expired", reason: (e as Error).message };
  }
}
