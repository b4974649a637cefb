/**
 * The Mastodon API's own shapes, as `masto` (a well-kept typed client, a development dependency) declares
 * the documented entities and method parameters (docs.joinmastodon.org/entities/, /methods/; read
 * 2026-11-26). masto names fields in camelCase and converts them; the wire is snake_case, so `Wire<>`
 * turns its types into what travels. Type-only: nothing of masto is loaded at run time, so the binary and
 * a production install (which do not carry it) are unaffected. The adapter reads answers through these
 * types (a misspelled field fails to compile), and tests/plugins/mastodon-contract.types.ts checks the
 * bodies it sends.
 */
import type { mastodon } from "masto";

type SnakeKey<S extends string> = S extends `${infer C}${infer R}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeKey<R>}`
  : S;

/** A masto type as it travels: snake_case keys, all the way down. */
export type Wire<T> = T extends string | number | boolean | null | undefined | Blob
  ? T
  : T extends readonly (infer U)[]
    ? readonly Wire<U>[]
    : T extends object
      ? { [K in keyof T as K extends string ? SnakeKey<K> : K]: Wire<T[K]> }
      : T;

export type StatusEntity = Wire<mastodon.v1.Status>;
export type MediaEntity = Wire<mastodon.v1.MediaAttachment>;
export type AccountEntity = Wire<mastodon.v1.Account>;
export type InstanceEntity = Wire<mastodon.v2.Instance>;
export type InstanceConfiguration = Wire<mastodon.v2.InstanceConfiguration>;
export type ApplicationEntity = Wire<mastodon.v1.Client>;
export type ContextEntity = Wire<mastodon.v1.Context>;
export type TokenEntity = Wire<mastodon.v1.Token>;
export type CreateStatusParams = Wire<mastodon.rest.v1.CreateStatusParams>;
export type CreateAppParams = Wire<mastodon.rest.v1.CreateAppParams>;
export type CreateMediaParams = Wire<mastodon.rest.v2.CreateMediaAttachmentParams>;
export type AuthorizationCodeTokenParams = Wire<mastodon.oauth.CreateTokenWithAuthorizationCodeParams>;
