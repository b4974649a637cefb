/**
 * The OAuth 2 authorization-code flow most platforms share: the authorization URL, the code exchange at
 * the token endpoint, and the identity call each plugin supplies. Endpoints can be overridden with
 * CRIER_<PLATFORM>_AUTHORIZE_URL and CRIER_<PLATFORM>_TOKEN_URL (sandbox profiles and tests use that).
 */
import { createHash } from "node:crypto";
import { ConnectError, type ConnectContext, type ConnectedIdentity, type ConnectFlow, type Credentials, type PluginContext } from "./sdk.ts";

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
  scopes: string[];
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
}

/** The Authorization header of an OAuth-connected account's API calls. */
export const bearerAuth = (ctx: PluginContext) => ({ authorization: `Bearer ${String(ctx.credentials.access_token)}` });

export const pkceChallenge = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/** Credentials as stored: the token answer with its expiry made absolute. */
export function tokenCredentials(token: TokenResponse, now: Date, extra: Credentials = {}): Credentials {
  return {
    access_token: token.access_token,
    ...(token.refresh_token && { refresh_token: token.refresh_token }),
    ...(typeof token.expires_in === "number" && { expires_at: new Date(now.getTime() + token.expires_in * 1000).toISOString() }),
    ...(token.scope && { scope: token.scope }),
    ...extra,
  };
}

/** One call whose failure becomes a message for the connect result page. */
export async function connectCall<T>(c: ConnectContext, what: string, method: string, url: string, opts: Parameters<ConnectContext["http"]["request"]>[2] = {}): Promise<T> {
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
      url.searchParams.set("scope", spec.scopes.join(spec.scopeSeparator ?? " "));
      url.searchParams.set("state", p.state);
      if (spec.pkce) {
        url.searchParams.set("code_challenge", pkceChallenge(p.codeVerifier));
        url.searchParams.set("code_challenge_method", "S256");
      }
      for (const [k, v] of Object.entries(spec.extraAuthorizeParams ?? {})) url.searchParams.set(k, v);
      return url.toString();
    },
    async exchange(c, p) {
      const id = c.settings[spec.clientIdSetting ?? "CLIENT_ID"] ?? "";
      const secret = c.settings.CLIENT_SECRET ?? "";
      const form: Record<string, string> = {
        grant_type: "authorization_code",
        code: p.code,
        redirect_uri: p.redirectUri,
        ...(spec.pkce && { code_verifier: p.codeVerifier }),
        ...(spec.clientAuth === "body" && { [spec.clientIdParam ?? "client_id"]: id, client_secret: secret }),
      };
      const headers: Record<string, string> = spec.clientAuth === "basic"
        ? { authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}` }
        : {};
      const tokenUrl = c.settings.TOKEN_URL ?? spec.tokenUrl;
      const token = spec.tokenMethod === "GET"
        ? await connectCall<TokenResponse>(c, "Exchanging the authorization code", "GET", tokenUrl, { query: form, headers })
        : await connectCall<TokenResponse>(c, "Exchanging the authorization code", "POST", tokenUrl, { form, headers });
      if (!token || typeof token.access_token !== "string") throw new ConnectError("The platform answered the code exchange without an access token.");
      return spec.identity(c, token);
    },
  };
}
