/**
 * Connecting a Mastodon account: the user names their server on Crier's page; Crier registers itself there
 * once (POST /api/v1/apps, kept per server) and sends the browser to that server's /oauth/authorize; the
 * callback exchanges the code at the same server's /oauth/token and reads the account
 * (docs.joinmastodon.org/methods/apps/, /methods/oauth/, /client/token/; read 2026-11-26). Tokens have no
 * expiry and no refresh token: an account stays connected until the user revokes Crier on the server.
 */
import { urlHostProblem } from "../../src/platform/address-rule.ts";
import { connectCall, pkceChallenge } from "../../src/platform/oauth.ts";
import {
  ConnectError,
  type ConnectContext,
  type ConnectedIdentity,
  type ConnectFlow,
  type Credentials,
  type ServerApps,
} from "../../src/platform/sdk.ts";
import type { AccountEntity, ApplicationEntity, CreateAppParams, TokenEntity } from "./contract.ts";
import { overridden, serverBase, serverLimits, serverName } from "./server.ts";

/**
 * What Crier asks for (docs.joinmastodon.org/api/oauth-scopes/, read 2026-11-26): read:accounts for
 * verify_credentials and the follower count, read:statuses for the account's statuses and their counts,
 * write:statuses to post, reply and make polls, write:media to upload files.
 */
export const SCOPES = ["read:accounts", "read:statuses", "write:statuses", "write:media"];

const appsOf = (c: ConnectContext): ServerApps => {
  if (!c.apps) throw new Error("the host gave no app registry to the Mastodon connect flow");
  return c.apps;
};

/** The body of POST /api/v1/apps: Crier as a confidential client with one redirect URI. */
export function appBody(settings: Record<string, string | undefined>, redirectUri: string): CreateAppParams {
  return {
    client_name: settings.CLIENT_NAME?.trim() || "Crier",
    redirect_uris: redirectUri,
    scopes: SCOPES.join(" "),
    ...(settings.CLIENT_WEBSITE && { website: settings.CLIENT_WEBSITE }),
  };
}

async function register(c: ConnectContext, base: string, redirectUri: string): Promise<Credentials> {
  const app = await connectCall<ApplicationEntity>(
    c,
    "Registering Crier on the server",
    "POST",
    `${base}/api/v1/apps`,
    {
      json: appBody(c.settings, redirectUri),
    },
  );
  if (typeof app?.client_id !== "string" || typeof app.client_secret !== "string")
    throw new ConnectError(
      "The server registered Crier without a client id and secret; it may not speak Mastodon's API.",
    );
  return { client_id: app.client_id, client_secret: app.client_secret, redirect_uri: redirectUri };
}

/**
 * Whether the server still knows a registered app: a client_credentials token is only issued to a known
 * client (POST /oauth/token; servers before 4.3 removed unused apps). Not answering proves nothing, so
 * the app is kept then.
 */
async function stillKnown(c: ConnectContext, base: string, app: Credentials): Promise<boolean> {
  const res = await c.http.request<TokenEntity>("POST", `${base}/oauth/token`, {
    form: {
      grant_type: "client_credentials",
      client_id: String(app.client_id),
      client_secret: String(app.client_secret),
      scope: "read:accounts",
    },
  });
  return res.ok || (res.status !== 401 && res.status !== 400);
}

/** The app registered on the server for this redirect URI, registered now when there is none. */
async function appFor(c: ConnectContext, server: string, base: string, redirectUri: string): Promise<Credentials> {
  const apps = appsOf(c);
  const known = await apps.find(server);
  if (known && known.redirect_uri === redirectUri && (await stillKnown(c, base, known))) return known;
  apps.forget(server);
  const app = await register(c, base, redirectUri);
  apps.remember(server, app);
  return app;
}

async function resolve(c: ConnectContext, values: Record<string, string>, p: { redirectUri: string }) {
  const server = serverName(values.server ?? "");
  if (!server)
    throw new ConnectError(
      `"${(values.server ?? "").slice(0, 100)}" is not a server's address: give its name, as in mastodon.social.`,
      "invalid_server",
    );
  const base = serverBase(c, server);
  if (!overridden(c)) {
    const problem = await urlHostProblem(base);
    if (problem)
      throw new ConnectError(`The server ${server} ${problem}; Crier does not connect there.`, "invalid_server");
  }
  const app = await appFor(c, server, base, p.redirectUri);
  return { server, client_id: String(app.client_id), client_secret: String(app.client_secret) };
}

function authorizationUrl(
  c: ConnectContext,
  p: { state: string; redirectUri: string; codeVerifier: string; carry?: Record<string, string> },
): string {
  const carry = p.carry ?? {};
  const url = new URL(`${serverBase(c, carry.server ?? "")}/oauth/authorize`);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", carry.client_id ?? "");
  url.searchParams.set("redirect_uri", p.redirectUri);
  url.searchParams.set("scope", SCOPES.join(" "));
  url.searchParams.set("state", p.state);
  // PKCE since Mastodon 4.3; servers without it ignore the two parameters.
  url.searchParams.set("code_challenge", pkceChallenge(p.codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  return url.toString();
}

async function exchange(
  c: ConnectContext,
  p: { code: string; redirectUri: string; codeVerifier: string; carry?: Record<string, string> },
): Promise<ConnectedIdentity> {
  const { server, client_id, client_secret } = p.carry ?? {};
  if (!server || !client_id || !client_secret) throw new ConnectError("This connection link does not name a server.");
  const base = serverBase(c, server);
  const token = await c.http.request<TokenEntity>("POST", `${base}/oauth/token`, {
    form: {
      grant_type: "authorization_code",
      code: p.code,
      client_id,
      client_secret,
      redirect_uri: p.redirectUri,
      code_verifier: p.codeVerifier,
    },
  });
  if (!token.ok) {
    if (token.status === 401) appsOf(c).forget(server);
    throw new ConnectError(`${server} refused the authorization: ${token.outcome.reason}`);
  }
  if (typeof token.body?.access_token !== "string")
    throw new ConnectError(`${server} answered without an access token.`);
  const me = await connectCall<AccountEntity>(
    c,
    "Reading the account",
    "GET",
    `${base}/api/v1/accounts/verify_credentials`,
    {
      headers: { authorization: `Bearer ${token.body.access_token}` },
    },
  );
  const limits = await serverLimits(c, base);
  return {
    // Account ids are the server's own: two servers may both have an account "1".
    remoteId: `${me.id}@${server}`,
    username: `${me.username}@${server}`,
    avatarUrl: me.avatar ?? null,
    credentials: {
      access_token: token.body.access_token,
      token_type: token.body.token_type ?? "Bearer",
      scope: token.body.scope ?? SCOPES.join(" "),
      app: { client_id, client_secret, redirect_uri: p.redirectUri },
    },
    metadata: { server, account_id: me.id, acct: me.acct, url: me.url ?? null, limits },
  };
}

export const connect: ConnectFlow = {
  mode: "oauth_authorization_url",
  // Nothing to configure: Crier registers itself on each server it is asked to connect.
  requiredSettings: [],
  ask: {
    title: "Connect a Mastodon account",
    instructions:
      "Name the server your account is on. Crier registers itself there and sends you to that server to sign in and allow it to post for you. Servers that speak Mastodon's API (GoToSocial, Akkoma, Pleroma) work too.",
    fields: [
      {
        name: "server",
        label: "Your server",
        type: "text",
        placeholder: "mastodon.social",
        help: "The part after the second @ of your address: @you@mastodon.social is on mastodon.social.",
      },
    ],
    resolve,
  },
  authorizationUrl,
  exchange,
};
