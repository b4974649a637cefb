/**
 * X's request and answer shapes as its official SDK declares them. `@xdevplatform/xdk` is generated from
 * X's OpenAPI (the 0.6 line follows OpenAPI 2.167, August 2026: `post.fields`, `referenced_posts`); it
 * spells every name in camelCase, while the wire speaks snake_case and `<object>.fields`. The types below
 * turn one into the other, so the adapter's bodies and queries and the emulator's answers are checked
 * against X's contract by the compiler: a misspelled or retired name does not compile. Type-only: the
 * SDK is a development dependency and nothing of it runs. Checked against @xdevplatform/xdk 0.6.6 on
 * 2026-11-26.
 */
import type { MediaClient, PostsClient, Schemas, UsersClient } from "@xdevplatform/xdk";

type SnakeKey<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeKey<T>}`
  : S;

/** A camelCase schema as it travels: every key in snake_case, nested objects and arrays too. */
export type Wire<T> =
  T extends Array<infer U>
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T as K extends string ? SnakeKey<K> : never]: Wire<T[K]> }
      : T;

/** `postFields` is sent as `post.fields`, `maxResults` as `max_results`. */
type QueryKey<K extends string> = K extends `${infer O}Fields` ? `${SnakeKey<O>}.fields` : SnakeKey<K>;

/**
 * The query string of an SDK method's options, with X's own parameter names. The SDK's options also take
 * any other key (an index signature, for the old names); only the declared ones are kept.
 */
export type WireQuery<O> = {
  [
    K in keyof O as string extends K
      ? never
      : K extends "requestOptions"
        ? never
        : K extends string
          ? QueryKey<K>
          : never
  ]?: O[K];
};

/** GET /2/users/{id}/tweets (UsersClient.getPosts). */
export type TimelineQuery = WireQuery<NonNullable<Parameters<UsersClient["getPosts"]>[1]>>;
/** GET /2/tweets (PostsClient.getByIds). */
export type PostsByIdsQuery = WireQuery<NonNullable<Parameters<PostsClient["getByIds"]>[1]>>;
/** GET /2/users/me (UsersClient.getMe). */
export type MeQuery = WireQuery<NonNullable<Parameters<UsersClient["getMe"]>[0]>>;
/** GET /2/media/upload?command=STATUS (MediaClient.getUploadStatus). */
export type UploadStatusQuery = WireQuery<NonNullable<Parameters<MediaClient["getUploadStatus"]>[1]>> & {
  media_id: string;
};
/** POST /2/tweets (PostsClient.create). */
export type CreatePostBody = Wire<Parameters<PostsClient["create"]>[0]>;
/** POST /2/media/upload/initialize (MediaClient.initializeUpload). */
export type InitializeUploadBody = Wire<Parameters<MediaClient["initializeUpload"]>[0]>;
/** POST /2/media/metadata (MediaClient.createMetadata): a media's alt text, among other things. */
export type CreateMetadataBody = Wire<Parameters<MediaClient["createMetadata"]>[0]>;
/** The multipart fields of the one-shot POST /2/media/upload (MediaClient.upload). */
export type UploadFields = Wire<Parameters<MediaClient["upload"]>[0]>;
/** The multipart fields of POST /2/media/upload/{id}/append (MediaClient.appendUpload). */
export type AppendUploadFields = Wire<Parameters<MediaClient["appendUpload"]>[1]>;

export type WirePost = Wire<Schemas.Post>;
export type WireMedia = Wire<Schemas.Media>;
export type WireUploadData = Wire<Schemas.MediaUploadResponseData>;

/** A typed query as the strings a URL carries: lists comma-joined, numbers as text. */
export function query<Q extends object>(q: Q): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(",") : String(v);
  }
  return out;
}
