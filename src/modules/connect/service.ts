import { createHmac, timingSafeEqual } from "node:crypto";
import { secretKeys } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import { Conflict, NotFound } from "../../http/errors.ts";
import {
  connectContext,
  envPrefix,
  platformSettings,
  sandboxBaseUrl,
  settingSuffix,
  type Target,
} from "../../platform/host/provider.ts";
import {
  ConnectError,
  type Choice,
  type ConnectAttempt,
  type ConnectedIdentity,
  type ConnectFlow,
  type Plugin,
} from "../../platform/sdk.ts";
import { findProfile, type Principal } from "../keys/service.ts";
import { upsertConnectedAccount } from "../accounts/service.ts";
import { AccountLimitReached, assertRoomFor, assertRoomToConnect } from "../accounts/limits.ts";
import { forgetTargetAccount } from "../accounts/target-accounts.ts";
import type { ConnectResult } from "./model.ts";
import { formPage, redirectPage, resultPage, type Requester } from "./pages.ts";
import {
  attemptSecret,
  codeVerifier,
  issueState,
  stateWithCarry,
  verifyState,
  type ConnectState,
  type StateCheck,
} from "./state.ts";
import { storedApp } from "./server-apps.ts";
import { spendState, stateSpent } from "./used-states.ts";
import { errorFields } from "../../log.ts";

const base = (ctx: AppContext) => ctx.config.publicUrl.replace(/\/+$/, "");
export const callbackUrl = (ctx: AppContext, platform: string) => `${base(ctx)}/v1/accounts/callback/${platform}`;
export const hostedUrl = (ctx: AppContext, platform: string, state: string) =>
  `${base(ctx)}/connect/${platform}?state=${encodeURIComponent(state)}`;

/** The server and the profile a verified state speaks for, shown on the pages of its flow. */
async function requesterOf(ctx: AppContext, state: ConnectState): Promise<Requester> {
  const profile = await findProfile(ctx.db, state.profileId);
  return {
    instanceName: ctx.config.instanceName,
    host: new URL(base(ctx)).host,
    profileName: profile?.name ?? "(deleted profile)",
  };
}

/** A sandbox flow talks to its own profile's emulators. */
const targetOf = (s: { sandbox: boolean; profileId: string }): Target =>
  s.sandbox ? { sandbox: true, profileId: s.profileId } : { sandbox: false };

function pluginOrNotFound(ctx: AppContext, platform: string): Plugin {
  const plugin = ctx.platforms.get(platform);
  if (!plugin) {
    throw new NotFound(
      `Platform '${platform}'`,
      "unsupported_platform",
      `Supported platforms: ${ctx.platforms
        .list()
        .map((p) => p.platform)
        .join(", ")}.`,
    );
  }
  return plugin;
}

function flowOf(plugin: Plugin): ConnectFlow {
  if (!plugin.connect) {
    throw new Conflict(
      "connect_not_available",
      `Connecting ${plugin.displayName} accounts is not available in this version of Crier yet.`,
      "See the README's platform table for what each platform supports.",
    );
  }
  return plugin.connect;
}

/** Computes the browser URL of a connect flow; connects and changes nothing. */
export async function startConnect(ctx: AppContext, principal: Principal, platform: string): Promise<ConnectResult> {
  const plugin = pluginOrNotFound(ctx, platform);
  const flow = flowOf(plugin);
  const sandbox = principal.sandbox;
  if (sandbox && !ctx.platforms.hasEmulator(platform)) {
    throw new Conflict(
      "sandbox_unavailable",
      `${plugin.displayName} has no emulator yet, so sandbox profiles cannot connect it.`,
      "Use a platform with an emulator (see the README's platform table) or a regular profile.",
    );
  }
  if (!sandbox) {
    const settings = platformSettings(ctx, platform);
    const missing = (flow.requiredSettings ?? []).filter((name) => !settings[name]);
    if (missing.length) {
      const vars = missing.map((m) => `${envPrefix(platform)}${settingSuffix(platform, m)}`);
      throw new Conflict(
        "platform_not_configured",
        `${plugin.displayName} is not configured on this server.`,
        `Set ${vars.join(" and ")} in the server's environment and restart it.`,
      );
    }
  }
  await assertRoomToConnect(ctx.db.db, principal.profileId, platform);
  const state = issueState(
    ctx.config.secretKey,
    { profileId: principal.profileId, platform, sandbox },
    ctx.clock.now(),
  );
  if (flow.mode === "oauth_authorization_url" && !flow.ask) {
    const c = connectContext(ctx, platform, targetOf({ sandbox, profileId: principal.profileId }), storedApp(ctx));
    const url = flow.authorizationUrl(c, {
      state,
      redirectUri: callbackUrl(ctx, platform),
      codeVerifier: codeVerifier(ctx.config.secretKey, state),
    });
    return { hosted_url: null, authorization_url: url, mode: flow.mode, platform };
  }
  return { hosted_url: hostedUrl(ctx, platform, state), authorization_url: null, mode: flow.mode, platform };
}

type StateFailure = Exclude<StateCheck, { ok: true }>["reason"] | "used";

const STATE_MESSAGES: Record<StateFailure, string> = {
  invalid: "This connection link is not valid: it was changed or cut short.",
  expired: "This connection link has expired: links are valid for five minutes.",
  wrong_platform: "This connection link belongs to another platform.",
  used: "This connection link has already been used: each link connects once.",
};

function stateFailure(platform: string, reason: StateFailure): Response {
  return resultPage({ ok: false, platform, title: "Connection failed", message: STATE_MESSAGES[reason] }, 400);
}

async function store(
  ctx: AppContext,
  state: ConnectState,
  plugin: Plugin,
  found: ConnectedIdentity | ConnectedIdentity[],
): Promise<Response> {
  const identities = Array.isArray(found) ? found : [found];
  if (identities.length === 0) throw new ConnectError(`No ${plugin.displayName} account was granted to Crier.`);
  try {
    const rows = await ctx.db.db.transaction(async (tx) => {
      // The cap may have been reached while the user was on the platform's page.
      await assertRoomFor(
        tx,
        state.profileId,
        plugin.platform,
        identities.map((i) => i.remoteId),
      );
      const stored = [];
      for (const identity of identities)
        stored.push(
          await upsertConnectedAccount(
            ctx,
            {
              profileId: state.profileId,
              platform: plugin.platform,
              remoteId: identity.remoteId,
              username: identity.username,
              avatarUrl: identity.avatarUrl ?? null,
              credentials: identity.credentials,
              metadata: identity.metadata ?? {},
            },
            tx,
          ),
        );
      return stored;
    });
    // Forgotten again once committed, so no read between the write and the commit keeps the old row.
    for (const row of rows) forgetTargetAccount(ctx.db, row.id);
  } catch (e) {
    if (!(e instanceof AccountLimitReached)) throw e;
    return resultPage(
      { ok: false, platform: plugin.platform, title: "Connection refused", message: `${e.message} ${e.hint}` },
      403,
    );
  }
  ctx.log.info("account connected", {
    platform: plugin.platform,
    profile_id: state.profileId,
    sandbox: state.sandbox,
    accounts: identities.length,
  });
  const names = identities.map((i) => i.username).join(", ");
  return resultPage({
    ok: true,
    platform: plugin.platform,
    requester: await requesterOf(ctx, state),
    title: "Account connected",
    message:
      identities.length === 1
        ? `${plugin.displayName} account ${names} is connected to Crier.`
        : `${identities.length} ${plugin.displayName} accounts are connected to Crier: ${names}.`,
  });
}

function failure(ctx: AppContext, platform: string, e: unknown): Response {
  if (e instanceof ConnectError)
    return resultPage({ ok: false, platform, title: "Connection failed", message: e.message }, 400);
  ctx.log.error("connect failed", { platform, ...errorFields(e) });
  return resultPage(
    {
      ok: false,
      platform,
      title: "Connection failed",
      message: "The platform's answer could not be used. Try again in a moment.",
    },
    502,
  );
}

/** The OAuth redirect target: exchanges the code and stores the account. */
export async function finishOAuth(
  ctx: AppContext,
  platform: string,
  query: Record<string, string | undefined>,
): Promise<Response> {
  const plugin = ctx.platforms.get(platform);
  if (!plugin || plugin.connect?.mode !== "oauth_authorization_url") {
    return resultPage(
      {
        ok: false,
        platform,
        title: "Connection failed",
        message: `Crier cannot connect '${platform}' accounts by OAuth.`,
      },
      404,
    );
  }
  const check = verifyState(secretKeys(ctx.config), query.state, platform, ctx.clock.now());
  if (!check.ok) return stateFailure(platform, check.reason);
  // Spent before the provider is called: a replayed callback (browser history, a leaked URL) connects nothing.
  if (!(await spendState(ctx.db, check.state, ctx.clock.now()))) return stateFailure(platform, "used");
  if (query.error) {
    const reason = query.error_description ?? query.error;
    return resultPage(
      {
        ok: false,
        platform,
        title: "Connection cancelled",
        message: `${plugin.displayName} did not grant access: ${reason}`,
      },
      400,
    );
  }
  if (!query.code)
    return resultPage(
      { ok: false, platform, title: "Connection failed", message: "The platform sent no authorization code." },
      400,
    );
  await sandboxReady(ctx, platform, check.state);
  const c = connectContext(ctx, platform, targetOf(check.state), storedApp(ctx));
  try {
    const identity = await plugin.connect.exchange(c, {
      code: query.code,
      redirectUri: callbackUrl(ctx, platform),
      codeVerifier: codeVerifier(check.secret, query.state!),
      ...(check.state.carry && { carry: check.state.carry }),
    });
    return await store(ctx, check.state, plugin, identity);
  } catch (e) {
    return failure(ctx, platform, e);
  }
}

type FormFlow = Extract<ConnectFlow, { fields: unknown }>;
type OAuthFlow = Extract<ConnectFlow, { mode: "oauth_authorization_url" }>;
/** A flow with a page under /connect/: a form or signer flow, or an OAuth flow that asks something first. */
type HostedFlow = Pick<FormFlow, "title" | "instructions" | "fields" | "prepare"> & { oauth?: OAuthFlow };

function hostedFlow(ctx: AppContext, platform: string): { plugin: Plugin; flow: HostedFlow } | null {
  const plugin = ctx.platforms.get(platform);
  if (!plugin?.connect) return null;
  if (plugin.connect.mode !== "oauth_authorization_url") return { plugin, flow: plugin.connect };
  const ask = plugin.connect.ask;
  return ask ? { plugin, flow: { ...ask, oauth: plugin.connect } } : null;
}

const notHosted = (platform: string) =>
  resultPage(
    { ok: false, platform, title: "Connection failed", message: `Crier has no connection page for '${platform}'.` },
    404,
  );

// Values a flow's prepare() hands to its verify() travel as hidden fields "carry__<name>", with
// "carry_sig" binding them to the state, so a user cannot swap in someone else's signer.
const CARRY = "carry__";
const LINK_URL = "__link_url";
const LINK_LABEL = "__link_label";
const CODE_VALUE = "__code_value";
const CODE_LABEL = "__code_label";
const CHOICES = "__choices";
const SHOWN_ONLY = [LINK_URL, LINK_LABEL, CODE_VALUE, CODE_LABEL, CHOICES];

const attemptOf = (check: VerifiedState): ConnectAttempt => ({
  secret: attemptSecret(check.secret, check.state),
  expiresAt: new Date(check.state.expiresAt),
});

// The flow's derived values use the key that signed its state (SECRET_KEY, or the previous one for a flow
// begun before a rotation), so a page shown before a restart with a new key still submits after it.
type VerifiedState = Extract<StateCheck, { ok: true }>;

function carrySignature(check: VerifiedState, state: string, carry: Record<string, string>): string {
  const canonical = JSON.stringify(
    Object.keys(carry)
      .sort()
      .map((k) => [k, carry[k]]),
  );
  return createHmac("sha256", check.secret)
    .update(`crier/connect-carry/v1\n${state}\n${canonical}`)
    .digest("base64url");
}

function hiddenCarry(check: VerifiedState, state: string, carry: Record<string, string>): Record<string, string> {
  if (Object.keys(carry).length === 0) return {};
  const out: Record<string, string> = { carry_sig: carrySignature(check, state, carry) };
  for (const [k, v] of Object.entries(carry)) out[CARRY + k] = v;
  return out;
}

function readCarry(check: VerifiedState, state: string, form: Record<string, unknown>): Record<string, string> | null {
  const carry: Record<string, string> = {};
  for (const [k, v] of Object.entries(form))
    if (k.startsWith(CARRY) && typeof v === "string") carry[k.slice(CARRY.length)] = v;
  if (Object.keys(carry).length === 0) return {};
  const sig = Buffer.from(typeof form.carry_sig === "string" ? form.carry_sig : "");
  const expected = Buffer.from(carrySignature(check, state, carry));
  return sig.length === expected.length && timingSafeEqual(sig, expected) ? carry : null;
}

function linkOf(carry: Record<string, string>) {
  return carry[LINK_URL] ? { url: carry[LINK_URL], label: carry[LINK_LABEL] ?? "Open" } : undefined;
}

/** The fields' suggestions prepare() offered, carried as JSON so a page shown again after an error keeps them. */
function choicesOf(carry: Record<string, string>): Record<string, Choice[]> | undefined {
  if (!carry[CHOICES]) return undefined;
  try {
    return JSON.parse(carry[CHOICES]) as Record<string, Choice[]>;
  } catch {
    return undefined;
  }
}

function codeOf(carry: Record<string, string>) {
  return carry[CODE_VALUE] ? { value: carry[CODE_VALUE], label: carry[CODE_LABEL] ?? "Code" } : undefined;
}

export async function showHostedForm(ctx: AppContext, platform: string, state: string | undefined): Promise<Response> {
  const found = hostedFlow(ctx, platform);
  if (!found) return notHosted(platform);
  const check = verifyState(secretKeys(ctx.config), state, platform, ctx.clock.now());
  if (!check.ok) return stateFailure(platform, check.reason);
  if (await stateSpent(ctx.db, check.state)) return stateFailure(platform, "used");
  const { flow } = found;
  await sandboxReady(ctx, platform, check.state);
  const requester = await requesterOf(ctx, check.state);
  let carry: Record<string, string> = {};
  let values: Record<string, string> | undefined;
  if (flow.prepare) {
    try {
      const prepared = await flow.prepare(
        connectContext(ctx, platform, targetOf(check.state), storedApp(ctx)),
        attemptOf(check),
      );
      carry = {
        ...prepared.carry,
        ...(prepared.link && { [LINK_URL]: prepared.link.url, [LINK_LABEL]: prepared.link.label }),
        ...(prepared.code && { [CODE_VALUE]: prepared.code.value, [CODE_LABEL]: prepared.code.label }),
        ...(prepared.choices && { [CHOICES]: JSON.stringify(prepared.choices) }),
      };
      values = prepared.values;
    } catch (e) {
      return failure(ctx, platform, e);
    }
  }
  return formPage({
    platform,
    title: flow.title,
    instructions: flow.instructions,
    fields: flow.fields,
    state: state!,
    action: `/connect/${platform}`,
    sandbox: check.state.sandbox,
    requester,
    hidden: hiddenCarry(check, state!, carry),
    link: sandboxLink(ctx, platform, check.state, state!, linkOf(carry)),
    code: codeOf(carry),
    choices: choicesOf(carry),
    values,
  });
}

export async function submitHostedForm(
  ctx: AppContext,
  platform: string,
  form: Record<string, unknown>,
): Promise<Response> {
  const found = hostedFlow(ctx, platform);
  if (!found) return notHosted(platform);
  const state = typeof form.state === "string" ? form.state : undefined;
  const check = verifyState(secretKeys(ctx.config), state, platform, ctx.clock.now());
  if (!check.ok) return stateFailure(platform, check.reason);
  const { plugin, flow } = found;
  const requester = await requesterOf(ctx, check.state);
  const carry = readCarry(check, state!, form);
  if (!carry)
    return resultPage(
      { ok: false, platform, title: "Connection failed", message: "This form was altered; nothing was connected." },
      400,
    );
  const values: Record<string, string> = {};
  for (const f of flow.fields) values[f.name] = typeof form[f.name] === "string" ? (form[f.name] as string).trim() : "";
  const again = (error: string, errorCode?: string) =>
    formPage({
      platform,
      title: flow.title,
      instructions: flow.instructions,
      fields: flow.fields,
      state: state!,
      action: `/connect/${platform}`,
      sandbox: check.state.sandbox,
      requester,
      error,
      errorCode,
      values,
      hidden: hiddenCarry(check, state!, carry),
      link: sandboxLink(ctx, platform, check.state, state!, linkOf(carry)),
      code: codeOf(carry),
      choices: choicesOf(carry),
    });
  const empty = flow.fields.find((f) => !values[f.name]);
  if (empty) return again(`${empty.label} is required.`);
  await sandboxReady(ctx, platform, check.state);
  if (flow.oauth) return toAuthorization(ctx, platform, flow.oauth, check, values, again);
  try {
    const carried = Object.fromEntries(Object.entries(carry).filter(([k]) => !SHOWN_ONLY.includes(k)));
    const identity = await (flow as FormFlow).verify(
      connectContext(ctx, platform, targetOf(check.state), storedApp(ctx)),
      { ...carried, ...values },
      attemptOf(check),
    );
    // Spent only once the values are right, so a mistyped password can be corrected on the same page.
    if (!(await spendState(ctx.db, check.state, ctx.clock.now()))) return stateFailure(platform, "used");
    return await store(ctx, check.state, plugin, identity);
  } catch (e) {
    if (e instanceof ConnectError) return again(e.message, e.code);
    return failure(ctx, platform, e);
  }
}

/**
 * Sandbox settings shown on connect pages (Nostr's bunker URI) come from the emulator's state: take up
 * what any copy saved before reading them, so a copy that just started shows the sandbox's real values.
 */
async function sandboxReady(ctx: AppContext, platform: string, state: ConnectState): Promise<void> {
  if (state.sandbox) await ctx.platforms.loadEmulator(platform, state.profileId);
}

/**
 * A link a sandbox flow shows that leads into the emulator (Farcaster's approval page) carries the
 * flow's state: the public listener opens an emulator's browser pages only with it.
 */
function sandboxLink(
  ctx: AppContext,
  platform: string,
  check: ConnectState,
  state: string,
  link: { url: string; label: string } | undefined,
) {
  if (!link || !check.sandbox || !link.url.startsWith(`${sandboxBaseUrl(ctx, platform)}/`)) return link;
  const url = new URL(link.url);
  url.searchParams.set("state", state);
  return { ...link, url: url.toString() };
}

/**
 * The submission of an OAuth flow's question (Mastodon: which server): the flow resolves the answers (and
 * registers its app there), and the browser goes on to the provider with a state that carries the result,
 * encrypted, so the callback can finish on any copy. The state stays unspent until the callback. The page
 * sends the browser on itself: a redirect answering a form post would be checked against the page's
 * form-action 'self' and refused by browsers.
 */
async function toAuthorization(
  ctx: AppContext,
  platform: string,
  flow: OAuthFlow,
  check: VerifiedState,
  values: Record<string, string>,
  again: (error: string, errorCode?: string) => Response,
): Promise<Response> {
  // A link whose callback already connected an account registers nothing more.
  if (await stateSpent(ctx.db, check.state)) return stateFailure(platform, "used");
  const c = connectContext(ctx, platform, targetOf(check.state), storedApp(ctx));
  let carry: Record<string, string>;
  try {
    carry = await flow.ask!.resolve(c, values, { redirectUri: callbackUrl(ctx, platform) });
  } catch (e) {
    if (e instanceof ConnectError) return again(e.message, e.code);
    return failure(ctx, platform, e);
  }
  const state = stateWithCarry(ctx.config.secretKey, check.state, carry);
  const url = flow.authorizationUrl(c, {
    state,
    redirectUri: callbackUrl(ctx, platform),
    codeVerifier: codeVerifier(ctx.config.secretKey, state),
    carry,
  });
  return redirectPage({ platform, url, requester: await requesterOf(ctx, check.state) });
}
