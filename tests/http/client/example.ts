// A client written the way an integrator would: types generated from /openapi.json with openapi-typescript
// (`npx openapi-typescript http://127.0.0.1:8080/openapi.json -o crier-api.ts`) and calls made with
// openapi-fetch. tests/http/openapi-client.test.ts generates ./crier-api.ts next to a copy of this file,
// type-checks both and runs the client against a served app; the README shows the same lines.
import createClient from "openapi-fetch";
import type { paths } from "./crier-api.ts";

export async function firstPost(baseUrl: string, apiKey: string, accountId: string) {
  const crier = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  const draft = await crier.POST("/v1/drafts", { body: { content: "Hello from a generated client" } });
  if (!draft.data) throw new Error(draft.error?.error.message);

  const created = await crier.POST("/v1/posts", {
    body: {
      content: draft.data.data.content,
      publish_at: new Date(Date.now() + 3_600_000).toISOString(),
      targets: [{ account_id: accountId }],
    },
  });
  if (!created.data) throw new Error(created.error?.error.message);

  const read = await crier.GET("/v1/posts/{id}", { params: { path: { id: created.data.data.id } } });
  if (!read.data) throw new Error(read.error?.error.message);
  const status: string = read.data.data.status;
  return { draftId: draft.data.data.id, postId: read.data.data.id, status };
}
