/**
 * Type-level checks of the Mastodon adapter against the API's own shapes, as `masto` declares the
 * documented method parameters and entities (plugins/mastodon/contract.ts turns them into their snake_case
 * wire form). Compiled by `npx tsc --noEmit -p .` (tsconfig includes tests/), not run by bun test: each
 * `@ts-expect-error` line must stay an error, so the build fails if the contract stopped catching an
 * invented field, and the assignments fail to compile if the adapter's bodies drift from the contract.
 */
import type {
  AuthorizationCodeTokenParams,
  CreateAppParams,
  CreateStatusParams,
  InstanceConfiguration,
  StatusEntity,
} from "../../plugins/mastodon/contract.ts";
import { appBody } from "../../plugins/mastodon/connect.ts";
import { statusBody } from "../../plugins/mastodon/publish.ts";

// POST /api/v1/statuses: text with a poll and a content warning, files, a reply.
export const withPoll: CreateStatusParams = statusBody(
  { content: "vote?" },
  {
    poll: { options: ["a", "b"], expires_in: 600, multiple: true },
    spoiler_text: "cw",
    visibility: "unlisted",
    language: "en",
  },
  [],
);
export const withFiles: CreateStatusParams = statusBody({ content: "" }, { sensitive: true }, ["1", "2"]);
export const reply: CreateStatusParams = statusBody({ content: "again", replyTo: { platformPostId: "9" } }, {}, []);

// POST /api/v1/apps.
export const app: CreateAppParams = appBody({}, "https://crier.example/v1/accounts/callback/mastodon");

// POST /oauth/token's authorization_code grant, as connect.ts sends it; code_verifier (PKCE, Mastodon 4.3,
// docs.joinmastodon.org/methods/oauth/#token) is documented but not in masto's type yet.
export const grant: AuthorizationCodeTokenParams & { code_verifier: string } = {
  grant_type: "authorization_code",
  code: "c",
  client_id: "id",
  client_secret: "secret",
  redirect_uri: "https://crier.example/v1/accounts/callback/mastodon",
  code_verifier: "v",
};

// The fields the adapter reads exist under these names.
export const counts: [StatusEntity["favourites_count"], StatusEntity["reblogs_count"], StatusEntity["replies_count"]] =
  [1, 2, 3];
export const maxCharacters: InstanceConfiguration["statuses"]["max_characters"] = 500;

// @ts-expect-error a poll's duration is expires_in, not expires_at
export const wrongPoll: CreateStatusParams = { status: "x", poll: { options: ["a", "b"], expires_at: 600 } };
// @ts-expect-error the content warning is spoiler_text
export const wrongWarning: CreateStatusParams = { status: "x", content_warning: "cw" };
// @ts-expect-error media_ids and a poll cannot go together
export const filesAndPoll: CreateStatusParams = { media_ids: ["1"], poll: { options: ["a", "b"], expires_in: 600 } };
// @ts-expect-error favourites are favourites_count, not likes_count
export const wrongCount: StatusEntity["likes_count"] = 1;
