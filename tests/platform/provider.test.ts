/**
 * What the host hands a plugin for an account (providerFor) is built on every publish, so its parts are
 * kept between publishes: the decrypted credentials, the platform's settings, the HTTP client. What is
 * kept must never outlive what it was made from: a refresh's new credentials are used at once, and what
 * one plugin call does with its settings or credentials reaches no other call.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { systemClock } from "../../src/clock.ts";
import { encryptJson } from "../../src/db/crypto.ts";
import { createLogger } from "../../src/log.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { platformSettings, providerFor, type HostContext } from "../../src/platform/host/provider.ts";

function hostContext(env: Record<string, string> = {}): HostContext {
  return {
    config: loadConfig({
      DATA_DIR: mkdtempSync(join(tmpdir(), "crier-provider-")),
      SECRET_KEY: "provider-test-secret-key-long-enough-000",
      LOG_LEVEL: "silent",
      ...env,
    }),
    clock: systemClock,
    log: createLogger("silent"),
    platforms: createRegistry(),
    credentials: { save: async () => {} },
  };
}

const account = (credentials: string) => ({
  id: crypto.randomUUID(),
  profileId: crypto.randomUUID(),
  platform: "bluesky",
  remoteId: "did:plc:provider",
  username: "provider.test",
  metadata: null,
  credentials,
});

test("an account's credentials are what is stored now: a refreshed token is used by the next publish", () => {
  const ctx = hostContext();
  const stored = encryptJson(ctx.config.secretKey, { accessJwt: "first", refreshJwt: "r1" });
  expect(providerFor(ctx, account(stored), { sandbox: false }).context.credentials).toEqual({
    accessJwt: "first",
    refreshJwt: "r1",
  });
  expect(providerFor(ctx, account(stored), { sandbox: false }).context.credentials.accessJwt).toBe("first");

  // A refresh stores a new encrypted text for the account (accounts service, saveCredentials).
  const refreshed = encryptJson(ctx.config.secretKey, { accessJwt: "second", refreshJwt: "r2" });
  expect(providerFor(ctx, account(refreshed), { sandbox: false }).context.credentials).toEqual({
    accessJwt: "second",
    refreshJwt: "r2",
  });
});

test("credentials one publish received cannot be changed under the next one", () => {
  const ctx = hostContext();
  const stored = encryptJson(ctx.config.secretKey, { accessJwt: "token", scopes: ["write"] });
  const first = providerFor(ctx, account(stored), { sandbox: false }).context;
  expect(() => {
    (first.credentials as Record<string, unknown>).accessJwt = "changed";
  }).toThrow();
  expect(() => (first.credentials.scopes as string[]).push("admin")).toThrow();
  // Saving new credentials replaces the object the plugin sees; the stored text's reading is unchanged.
  first.credentials = { accessJwt: "replaced" };
  expect(providerFor(ctx, account(stored), { sandbox: false }).context.credentials).toEqual({
    accessJwt: "token",
    scopes: ["write"],
  });
});

test("a platform's settings come from the environment, and a plugin writing to its copy changes no other", () => {
  const ctx = hostContext({ CRIER_BLUESKY_TIMEOUT_MS: "5000", CRIER_TELEGRAM_TIMEOUT_MS: "7000" });
  const settings = platformSettings(ctx, "bluesky");
  expect(settings.TIMEOUT_MS).toBe("5000");
  expect(settings.CRIER_BLUESKY_TIMEOUT_MS).toBe("5000");
  expect(settings.CRIER_TELEGRAM_TIMEOUT_MS).toBeUndefined();
  settings.TIMEOUT_MS = "1";
  expect(platformSettings(ctx, "bluesky").TIMEOUT_MS).toBe("5000");
  expect(
    providerFor(ctx, account(encryptJson(ctx.config.secretKey, {})), { sandbox: false }).context.http.timeoutMs,
  ).toBe(5000);
  expect(platformSettings(ctx, "telegram").TIMEOUT_MS).toBe("7000");
});

test("sandbox and live accounts of one platform reach different hosts", () => {
  const ctx = hostContext({ CRIER_BLUESKY_API_URL: "http://127.0.0.1:9/live", PUBLIC_URL: "http://127.0.0.1:8" });
  const stored = encryptJson(ctx.config.secretKey, {});
  expect(providerFor(ctx, account(stored), { sandbox: false }).context.http.baseUrl).toBe("http://127.0.0.1:9/live");
  expect(providerFor(ctx, account(stored), { sandbox: true }).context.http.baseUrl).toBe(
    "http://127.0.0.1:8/sandbox/bluesky",
  );
  expect(providerFor(ctx, account(stored), { sandbox: false }).context.http.baseUrl).toBe("http://127.0.0.1:9/live");
});
