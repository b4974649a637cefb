import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

/** Follows a #/components/schemas/ $ref to the schema it names. */
const deref = (spec: any, schema: any) =>
  schema?.$ref ? spec.components.schemas[schema.$ref.split("/").pop()] : schema;

test("/openapi.json is OpenAPI 3.1 with every /v1 route, its scope and its error responses", async () => {
  const res = await h.request("GET", "/openapi.json");
  expect(res.status).toBe(200);
  const spec = res.body;
  expect(spec.openapi).toMatch(/^3\.1/);
  const ops = Object.entries<any>(spec.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([m, op]) => ({ path, m, op })),
  );
  for (const want of [
    "get /v1/accounts",
    "delete /v1/accounts/{id}",
    "get /v1/drafts",
    "post /v1/drafts",
    "get /v1/drafts/{id}",
    "patch /v1/drafts/{id}",
    "delete /v1/drafts/{id}",
    "post /v1/accounts/connect/{platform}",
    "post /v1/media/uploads",
    "get /v1/media/{id}",
    "get /v1/posts",
    "post /v1/posts",
    "get /v1/posts/{id}",
    "patch /v1/posts/{id}",
    "post /v1/posts/{id}/publish",
    "post /v1/posts/{id}/cancel",
    "post /v1/posts/{id}/retry",
    "delete /v1/posts/{id}",
    "get /v1/posts/{id}/targets/{targetId}",
    "post /v1/posts/{id}/targets/{targetId}/retry",
    "post /v1/posts/{id}/targets/{targetId}/cancel",
  ]) {
    expect(ops.map((o) => `${o.m} ${o.path}`)).toContain(want);
  }
  // Paths are written as the spec writes them: no trailing slash.
  expect(ops.filter((o) => o.path.length > 1 && o.path.endsWith("/")).map((o) => o.path)).toEqual([]);
  for (const { path, op } of ops.filter((o) => o.path.startsWith("/v1/") && !o.path.includes("/callback/"))) {
    expect(op["x-scope"]).toBeString();
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["401", "403"]));
    expect(op.summary ?? path).toBeString();
  }
  expect(spec.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
});

test("/docs is served with its own assets, nothing from a CDN", async () => {
  const page = await h.request("GET", "/docs");
  expect(page.status).toBe(200);
  const html = String(page.body);
  const external = [...html.matchAll(/(?:src|href)="(https?:\/\/[^"]+)"/g)].map((m) => m[1]);
  expect(external).toEqual([]);
  const assets = [...html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]);
  expect(assets.length).toBe(2);
  for (const a of assets) {
    const res = await h.app.handle(new Request(`http://localhost${a}`));
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  }
});

test("/healthz answers without a key; /readyz checks the database", async () => {
  expect((await h.request("GET", "/healthz")).body).toEqual({ status: "ok" });
  const ready = await h.request("GET", "/readyz");
  expect(ready.status).toBe(200);
  expect(ready.body.status).toBe("ok");
});

test("/readyz is 503 when the database does not answer", async () => {
  const broken = await createHarness();
  await broken.db.close();
  const res = await broken.request("GET", "/readyz");
  expect(res.status).toBe(503);
  expect(res.body.status).toBe("unavailable");
});

test("JSON request bodies are described under application/json with their schema", async () => {
  const spec = (await h.request("GET", "/openapi.json")).body;
  const body = spec.paths["/v1/drafts"].post.requestBody;
  expect(Object.keys(body.content)).toEqual(["application/json"]);
  const schema = deref(spec, body.content["application/json"].schema);
  expect(schema.properties).toHaveProperty("selected_account_ids");
  expect(schema.additionalProperties).toBe(false);
});

test("every plugin's platform_options schema is a component, linked from PostTargetInput.platform_options", async () => {
  const spec = (await h.request("GET", "/openapi.json")).body;
  const create = deref(spec, spec.paths["/v1/posts"].post.requestBody.content["application/json"].schema);
  const target = deref(spec, create.properties.targets.items);
  expect(target.title).toBe("PostTargetInput");
  const options = target.properties.platform_options;
  const plugins = h.ctx.platforms.list();
  expect(plugins.length).toBeGreaterThanOrEqual(15);
  for (const p of plugins) {
    const name = `${p.platform[0].toUpperCase()}${p.platform.slice(1)}Options`;
    const schema = spec.components.schemas[name];
    expect(schema, name).toBeDefined();
    // The component is the plugin's own schema, keys and all.
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual(
      Object.keys((p.optionsSchema as any).properties ?? {}).sort(),
    );
    expect(schema.description).toContain(p.platform);
    expect(options["x-platform-options"][p.platform]).toEqual({ $ref: `#/components/schemas/${name}` });
    expect(options.description).toContain(`(#/components/schemas/${name})`);
  }
  expect(spec.components.schemas.TwitterOptions).toBeDefined();
  expect(spec.components.schemas.VimeoOptions.properties.title.maxLength).toBe(128);
  // PATCH takes the same targets, described the same way.
  const patch = deref(spec, spec.paths["/v1/posts/{id}"].patch.requestBody.content["application/json"].schema);
  const patched = deref(spec, patch.properties.targets.items);
  expect(patched.properties.platform_options["x-platform-options"]).toEqual(options["x-platform-options"]);
});
