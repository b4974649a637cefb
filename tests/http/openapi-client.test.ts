import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import { createHarness, type Harness } from "../support/harness.ts";
import { ROOT } from "../support/cli.ts";

// If the description stops being usable by a client generator, this fails: types are generated from the
// served /openapi.json, a small openapi-fetch client (tests/http/client/example.ts) is type-checked
// against them and then run against the app over real HTTP.
let h: Harness;
let server: ReturnType<typeof Bun.serve>;
const dir = join(ROOT, ".tmp", `openapi-client-${process.pid}`);

beforeAll(async () => {
  h = await createHarness();
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => h.app.handle(req) });
  mkdirSync(dir, { recursive: true });
});
afterAll(async () => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
  await h.close();
});

test("types generated with openapi-typescript type-check an openapi-fetch client that then works", async () => {
  const description = await (await fetch(`${server.url}openapi.json`)).json();
  const types = astToString(await openapiTS(description));
  // Named components become named types, not anonymous inline shapes.
  for (const name of ["Post", "PostTarget", "Draft", "Account", "Media", "UploadTicket", "Error"]) {
    expect(types).toMatch(new RegExp(`\\b${name}: \\{`));
  }
  writeFileSync(join(dir, "crier-api.ts"), types);
  cpSync(join(ROOT, "tests/http/client/example.ts"), join(dir, "example.ts"));
  const tsc = Bun.spawnSync(
    [
      process.execPath,
      join(ROOT, "node_modules/typescript/bin/tsc"),
      "--noEmit",
      "--strict",
      "--skipLibCheck",
      "--target",
      "es2022",
      "--module",
      "preserve",
      "--moduleResolution",
      "bundler",
      "--allowImportingTsExtensions",
      "--lib",
      "es2022,dom",
      join(dir, "example.ts"),
    ],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe("");
  expect(tsc.exitCode).toBe(0);

  const { profileId, token } = await h.profile();
  const account = await upsertConnectedAccount(h.ctx, {
    profileId,
    platform: "bluesky",
    remoteId: "did:plc:client",
    username: "client.test",
    credentials: { did: "did:plc:client", accessJwt: "a", refreshJwt: "r", handle: "client.test" },
  });
  const { firstPost } = await import(join(dir, "example.ts"));
  const result = await firstPost(server.url.origin, token, account.id);
  expect(result.status).toBe("scheduled");
  expect((await h.request("GET", `/v1/drafts/${result.draftId}`, { token })).status).toBe(200);
}, 60_000);
