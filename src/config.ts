import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { resolve, join } from "node:path";
import { randomBytes } from "node:crypto";
import { isAddressOrRange } from "./http/client-address.ts";
import { PLATFORMS } from "./platform/declaration.ts";

/** Raised when an environment variable holds a value Crier cannot use; main.ts prints it as one line. */
export class ConfigError extends Error {}

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface S3Config {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  publicUrl?: string;
}

export interface AiConfig {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  /** A name for this server shown on hosted connect pages beside PUBLIC_URL's host; absent: the host alone. */
  instanceName?: string;
  dataDir: string;
  databaseUrl?: string;
  /** Connections to PostgreSQL per running copy. */
  databasePoolSize: number;
  /** PostgreSQL's statement_timeout on the pool's connections, in ms; 0: not set (the server's own applies). */
  databaseStatementTimeoutMs: number;
  /** Client-side bound of each statement an API request sends to PostgreSQL, in ms (src/db/deadline.ts). */
  databaseRequestTimeoutMs: number;
  /** Requests per minute per API key, per running copy; 0 turns the limit off. */
  rateLimitPerMinute: number;
  secretKey: Buffer;
  /**
   * The key SECRET_KEY replaced, while `crier secrets rotate` moves what it encrypted to the new one:
   * stored secrets and signed links made with it still open; nothing new is made with it.
   */
  secretKeyPrevious?: Buffer;
  logLevel: LogLevel;
  uploadTicketTtlSeconds: number;
  maxImageBytes: number;
  maxGifBytes: number;
  maxVideoBytes: number;
  maxBodyBytes: number;
  /** How long a claimed target may go unrenewed before it is declared outcome_unknown (a copy died). */
  publishLeaseSeconds: number;
  /** Attempts of a target on retryable failures (429, 5xx, connection refused) before it fails. */
  publishMaxAttempts: number;
  /** Publishes one copy runs at once over all platforms (each platform's own cap still applies). */
  publishConcurrency: number;
  s3?: S3Config;
  /** Seconds between two polls of a workflow's source account (jittered per poll). */
  workflowPollIntervalSeconds: number;
  /** OpenAI-compatible chat-completions endpoint for workflow caption adaptation; absent: adapt_caption is refused. */
  ai?: AiConfig;
  /**
   * Webhook URLs may point at loopback and private addresses (and use plain http there). Off by default:
   * the SSRF guard of media fetch applies to every webhook URL, at creation and at each delivery.
   */
  webhookAllowPrivate: boolean;
  /**
   * Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client; empty: the header
   * is ignored and the peer is the client.
   */
  trustedProxies: string[];
  /** Media tools (src/media/tools.ts): ffmpeg and ffprobe, found on PATH unless FFMPEG_PATH/FFPROBE_PATH name them. */
  ffmpegPath?: string;
  ffprobePath?: string;
  /** Keep location metadata (EXIF GPS, XMP) in images sent to platforms; off: it is stripped. */
  keepMediaMetadata: boolean;
  /** Conversions (sharp or ffmpeg) one copy runs at once. */
  mediaConvertConcurrency: number;
  /** Platforms turned off by the operator (PLATFORMS_DISABLED): not connectable, listed or published to. */
  platformsDisabled: string[];
  /** Raw environment, for per-platform settings (CRIER_<PLATFORM>_API_URL and app credentials). */
  env: Record<string, string | undefined>;
}

/** One row of the configuration table: the README's table is checked against this list by a test. */
export const CONFIG_VARIABLES = [
  "PORT",
  "HOST",
  "PUBLIC_URL",
  "INSTANCE_NAME",
  "DATA_DIR",
  "DATABASE_URL",
  "SECRET_KEY",
  "SECRET_KEY_PREVIOUS",
  "LOG_LEVEL",
  "UPLOAD_TICKET_TTL",
  "MAX_IMAGE_BYTES",
  "MAX_GIF_BYTES",
  "MAX_VIDEO_BYTES",
  "MAX_BODY_BYTES",
  "FFMPEG_PATH",
  "FFPROBE_PATH",
  "KEEP_MEDIA_METADATA",
  "MEDIA_CONVERT_CONCURRENCY",
  "S3_ENDPOINT",
  "S3_REGION",
  "S3_BUCKET",
  "S3_ACCESS_KEY_ID",
  "S3_SECRET_ACCESS_KEY",
  "S3_FORCE_PATH_STYLE",
  "S3_PUBLIC_URL",
  "PUBLISH_LEASE_SECONDS",
  "PUBLISH_MAX_ATTEMPTS",
  "PUBLISH_CONCURRENCY",
  "DATABASE_POOL_SIZE",
  "DATABASE_STATEMENT_TIMEOUT",
  "DATABASE_REQUEST_TIMEOUT",
  "RATE_LIMIT_PER_MINUTE",
  "WORKFLOW_POLL_INTERVAL",
  "AI_BASE_URL",
  "AI_API_KEY",
  "AI_MODEL",
  "AI_TIMEOUT",
  "WEBHOOK_ALLOW_PRIVATE",
  "TRUSTED_PROXIES",
  "PLATFORMS_DISABLED",
] as const;

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/**
 * A URL as an error message may show it: without the user and password part (DATABASE_URL carries one).
 * Everything up to the last "@" goes, so a password holding "/" or "@" is hidden too, parsable or not.
 */
export function withoutUserinfo(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, (_, scheme: string | undefined) => `${scheme ?? ""}***@`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${withoutUserinfo(raw)}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(" or ")}, got "${withoutUserinfo(raw)}"`);
  }
  return raw.replace(/\/+$/, "");
}

/** Parses a duration like "2h", "30m", "90s" or a plain number of seconds. */
export function parseDuration(raw: string): number | null {
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(raw.trim());
  if (!m) return null;
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? "s") as "s"];
  return Number(m[1]) * unit;
}

/** A duration setting (parseDuration) of at least `min` seconds, or the fallback when unset. */
function duration(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const parsed = parseDuration(raw);
  if (parsed === null || parsed < min)
    throw new ConfigError(`${name} must be a duration of at least ${min}s like 30s or 5m, got "${raw}"`);
  return parsed;
}

/**
 * A duration in milliseconds: "1500ms", "2s", "1m", or a plain number of seconds like every other
 * duration here; 0 only where `allowZero` (off).
 */
function millis(env: Env, name: string, fallback: number, min: number, max: number, allowZero = false): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const m = /^(\d+)\s*(ms|s|m)?$/.exec(raw);
  const ms = m ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[(m[2] ?? "s") as "s"] : NaN;
  if (allowZero && ms === 0) return 0;
  if (!(ms >= min && ms <= max))
    throw new ConfigError(
      `${name} must be a duration between ${min} ms and ${max / 1000} s like 1500ms or 5s${allowZero ? ", or 0" : ""}, got "${raw}"`,
    );
  return ms;
}

function trustedProxies(env: Env): string[] {
  const entries = (env.TRUSTED_PROXIES ?? "").split(/[\s,]+/).filter(Boolean);
  const bad = entries.find((e) => !isAddressOrRange(e));
  if (bad)
    throw new ConfigError(
      `TRUSTED_PROXIES must list IP addresses or CIDR ranges (like 10.0.0.0/8), separated by commas, got "${bad}"`,
    );
  return entries;
}

function ai(env: Env): AiConfig | undefined {
  const baseUrl = url(env, "AI_BASE_URL", ["http:", "https:"]);
  const model = env.AI_MODEL?.trim();
  if (!baseUrl && !model) return undefined;
  if (!baseUrl || !model)
    throw new ConfigError("AI_BASE_URL and AI_MODEL go together: set both to turn on caption adaptation, or neither");
  return {
    baseUrl,
    model,
    apiKey: env.AI_API_KEY?.trim() || undefined,
    timeoutMs: duration(env, "AI_TIMEOUT", 30, 1) * 1000,
  };
}

const INSTANCE_NAME_MAX = 80;

function instanceName(env: Env): string | undefined {
  const raw = env.INSTANCE_NAME?.trim();
  if (!raw) return undefined;
  if (raw.length > INSTANCE_NAME_MAX || /[\u0000-\u001f\u007f]/.test(raw))
    throw new ConfigError(`INSTANCE_NAME must be one line of at most ${INSTANCE_NAME_MAX} characters`);
  return raw;
}

/** The file in DATA_DIR holding the generated key when SECRET_KEY is unset. */
export const secretKeyFile = (dataDir: string) => join(dataDir, "secret.key");

/** SECRET_KEY, or the key generated earlier into DATA_DIR; null when there is neither (nothing is created). */
export function existingSecretKey(env: Env, dataDir: string): Buffer | null {
  const raw = env.SECRET_KEY?.trim();
  if (raw) {
    if (raw.length < 32) throw new ConfigError("SECRET_KEY must be at least 32 characters");
    return Buffer.from(raw, "utf8");
  }
  const file = secretKeyFile(dataDir);
  return existsSync(file) ? Buffer.from(readFileSync(file, "utf8").trim(), "utf8") : null;
}

function secretKey(env: Env, dataDir: string): Buffer {
  const existing = existingSecretKey(env, dataDir);
  if (existing) return existing;
  // Generated once and kept beside the data so encrypted credentials survive restarts.
  const file = secretKeyFile(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString("base64url");
  writeFileSync(file, key + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return Buffer.from(key, "utf8");
}

function secretKeyPrevious(env: Env, current: Buffer): Buffer | undefined {
  const raw = env.SECRET_KEY_PREVIOUS?.trim();
  if (!raw) return undefined;
  if (raw.length < 32) throw new ConfigError("SECRET_KEY_PREVIOUS must be at least 32 characters");
  const previous = Buffer.from(raw, "utf8");
  if (previous.equals(current))
    throw new ConfigError("SECRET_KEY_PREVIOUS is the same as SECRET_KEY: set it to the key SECRET_KEY replaced");
  return previous;
}

/**
 * The keys that open stored secrets and verify signed links, SECRET_KEY first. New things are always
 * encrypted and signed with SECRET_KEY alone.
 */
export const secretKeys = (c: Pick<Config, "secretKey" | "secretKeyPrevious">): Buffer[] =>
  c.secretKeyPrevious ? [c.secretKey, c.secretKeyPrevious] : [c.secretKey];

/** Where the data lives, read without the rest of the configuration (a restore must not create a key). */
export function dataLocation(env: Env = process.env): { dataDir: string; databaseUrl?: string } {
  return {
    dataDir: resolve(env.DATA_DIR?.trim() || "./data"),
    databaseUrl: url(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, "PORT", 8080, 0, 65535);
  const host = env.HOST?.trim() || "127.0.0.1";
  const { dataDir, databaseUrl } = dataLocation(env);
  const logLevel = (env.LOG_LEVEL?.trim().toLowerCase() || "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${env.LOG_LEVEL}"`);
  }
  const publicUrl =
    url(env, "PUBLIC_URL", ["http:", "https:"]) ??
    `http://${host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host}:${port}`;
  let ttl = 7200;
  if (env.UPLOAD_TICKET_TTL?.trim()) {
    const parsed = parseDuration(env.UPLOAD_TICKET_TTL);
    if (parsed === null || parsed < 60) {
      throw new ConfigError(
        `UPLOAD_TICKET_TTL must be a duration of at least 60s like 2h or 900s, got "${env.UPLOAD_TICKET_TTL}"`,
      );
    }
    ttl = parsed;
  }
  const secret = secretKey(env, dataDir);
  const MB = 1024 * 1024;
  const bucket = env.S3_BUCKET?.trim();
  const s3: S3Config | undefined = bucket
    ? {
        bucket,
        endpoint: url(env, "S3_ENDPOINT", ["http:", "https:"]),
        region: env.S3_REGION?.trim() || "us-east-1",
        accessKeyId: env.S3_ACCESS_KEY_ID?.trim() || undefined,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY?.trim() || undefined,
        forcePathStyle: bool(env, "S3_FORCE_PATH_STYLE", false),
        publicUrl: url(env, "S3_PUBLIC_URL", ["http:", "https:"]),
      }
    : undefined;
  return {
    port,
    host,
    publicUrl,
    instanceName: instanceName(env),
    dataDir,
    databaseUrl,
    databasePoolSize: integer(env, "DATABASE_POOL_SIZE", 10, 1, 1000),
    databaseStatementTimeoutMs: millis(env, "DATABASE_STATEMENT_TIMEOUT", 5_000, 100, 3_600_000, true),
    databaseRequestTimeoutMs: millis(env, "DATABASE_REQUEST_TIMEOUT", 1_500, 100, 600_000),
    rateLimitPerMinute: integer(env, "RATE_LIMIT_PER_MINUTE", 1200, 0, 10_000_000),
    secretKey: secret,
    secretKeyPrevious: secretKeyPrevious(env, secret),
    logLevel,
    uploadTicketTtlSeconds: ttl,
    maxImageBytes: integer(env, "MAX_IMAGE_BYTES", 20 * MB, 1, 2 ** 40),
    maxGifBytes: integer(env, "MAX_GIF_BYTES", 15 * MB, 1, 2 ** 40),
    maxVideoBytes: integer(env, "MAX_VIDEO_BYTES", 1024 * MB, 1, 2 ** 40),
    maxBodyBytes: integer(env, "MAX_BODY_BYTES", 1 * MB, 1024, 2 ** 30),
    ffmpegPath: env.FFMPEG_PATH?.trim() || undefined,
    ffprobePath: env.FFPROBE_PATH?.trim() || undefined,
    keepMediaMetadata: bool(env, "KEEP_MEDIA_METADATA", false),
    mediaConvertConcurrency: integer(env, "MEDIA_CONVERT_CONCURRENCY", 1, 1, 64),
    publishLeaseSeconds: integer(env, "PUBLISH_LEASE_SECONDS", 120, 5, 86400),
    publishConcurrency: integer(env, "PUBLISH_CONCURRENCY", 32, 1, 1024),
    publishMaxAttempts: integer(env, "PUBLISH_MAX_ATTEMPTS", 5, 1, 100),
    s3,
    workflowPollIntervalSeconds: duration(env, "WORKFLOW_POLL_INTERVAL", 300, 1),
    ai: ai(env),
    webhookAllowPrivate: bool(env, "WEBHOOK_ALLOW_PRIVATE", false),
    trustedProxies: trustedProxies(env),
    platformsDisabled: platformsDisabled(env),
    env: { ...env },
  };
}

/** PLATFORMS_DISABLED: platform ids, comma- or space-separated; an id Crier does not know is refused. */
function platformsDisabled(env: Env): string[] {
  const ids = (env.PLATFORMS_DISABLED ?? "")
    .split(/[\s,]+/)
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const unknown = ids.filter((id) => !(PLATFORMS as readonly string[]).includes(id));
  if (unknown.length)
    throw new ConfigError(
      `PLATFORMS_DISABLED names ${unknown.map((u) => `"${u}"`).join(", ")}, which ${unknown.length > 1 ? "are not platforms" : "is not a platform"} Crier knows; use ids from: ${PLATFORMS.join(", ")}`,
    );
  return [...new Set(ids)];
}
