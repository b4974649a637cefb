import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app.ts";
import { createHarness, type Harness } from "../support/harness.ts";
import { ROOT } from "../support/cli.ts";
import pkg from "../../package.json" with { type: "json" };

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

test("shared schemas are named once in components and referenced, never repeated inline", async () => {
  const spec = (await h.request("GET", "/openapi.json")).body;
  const names = Object.keys(spec.components.schemas);
  for (const name of [
    "Account",
    "Post",
    "PostTarget",
    "Draft",
    "Media",
    "UploadTicket",
    "Workflow",
    "WorkflowSettings",
    "PostAnalytics",
    "Error",
    "DeleteResult",
    "TwitterOptions",
  ]) {
    expect(names).toContain(name);
  }
  const text = JSON.stringify(spec.paths);
  expect(text).not.toContain('"title":');
  expect(text).toContain('"$ref":"#/components/schemas/Post"');
  const read = spec.paths["/v1/posts/{id}"].get.responses["200"].content["application/json"].schema;
  expect(read.properties.data).toEqual({ $ref: "#/components/schemas/Post" });
  expect(spec.paths["/v1/posts/{id}"].get.responses["404"].content["application/json"].schema).toEqual({
    $ref: "#/components/schemas/Error",
  });
  // Every $ref points at a component that exists.
  for (const [, name] of JSON.stringify(spec).matchAll(/"#\/components\/schemas\/([A-Za-z0-9_]+)"/g)) {
    expect(names).toContain(name);
  }
});

test("info.version is the API version of the spec; Crier's own version, servers and public operations are stated", async () => {
  const spec = (await h.request("GET", "/openapi.json")).body;
  expect(spec.info.version).toBe("1.0.0-alpha");
  expect(spec.info["x-crier-version"]).toBe(pkg.version);
  expect(spec.servers).toEqual([{ url: h.ctx.config.publicUrl, description: expect.any(String) }]);
  expect(spec.paths["/healthz"].get.security).toEqual([]);
  expect(spec.paths["/v1/accounts/callback/{platform}"].get.security).toEqual([]);
  // The spec-named error codes of a field are schema extensions (x-…), which OpenAPI allows.
  const filename = spec.components.schemas.UploadCreate.properties.filename;
  expect(filename["x-error-code"]).toBe("invalid_filename");
  expect(Object.keys(filename)).not.toContain("errorCode");
});

test("the description is the same whatever the server answered before it", async () => {
  // Elysia builds validators on a route's first request and writes defaults into the shared schemas;
  // a description read before and after other requests must not differ (nor between source and binary).
  const describe = async (app: ReturnType<typeof createApp>) =>
    (await app.handle(new Request("http://localhost/openapi.json"))).text();
  const { token } = await h.profile();
  const call = (app: ReturnType<typeof createApp>, method: string, path: string, body: unknown) =>
    app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  const fresh = createApp(h.ctx);
  const first = await describe(fresh);
  await call(fresh, "POST", "/v1/drafts", { content: "x", media: [{ type: "image", url: "https://x.example/a.png" }] });
  await call(fresh, "POST", "/v1/posts", { targets: [] });
  await call(fresh, "POST", "/v1/workflows", {});
  expect(await describe(fresh)).toBe(first);
  const other = createApp(h.ctx);
  await call(other, "POST", "/v1/media/uploads", {});
  await call(other, "POST", "/v1/drafts", { content: 1 });
  expect(await describe(other)).toBe(first);
});

test("/docs/ (trailing slash) loads the description as /docs does", async () => {
  for (const page of ["/docs", "/docs/"]) {
    const html = String((await h.request("GET", page)).body);
    const url = html.match(/"url":\s*"([^"]+)"/)?.[1];
    expect(url, page).toBeString();
    const resolved = new URL(url!, `http://localhost${page}`);
    const res = await h.app.handle(new Request(resolved));
    expect(res.status).toBe(200);
    expect((await res.json()).openapi).toMatch(/^3\.1/);
  }
});

test("redocly lint with the recommended rules finds no error (npm run lint:openapi)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "crier-openapi-lint-"));
  try {
    writeFileSync(
      join(dir, "openapi.json"),
      await (await h.app.handle(new Request("http://localhost/openapi.json"))).text(),
    );
    const lint = Bun.spawnSync(
      [
        join(ROOT, "node_modules/.bin/redocly"),
        "lint",
        join(dir, "openapi.json"),
        "--config",
        join(ROOT, "redocly.yaml"),
      ],
      {
        cwd: ROOT,
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      },
    );
    const out = lint.stdout.toString() + lint.stderr.toString();
    expect(lint.exitCode, out).toBe(0);
    expect(out).toContain("Your API description is valid");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
