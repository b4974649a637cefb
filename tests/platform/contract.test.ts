/**
 * The contract packages are development dependencies that emulators load lazily: present in tests (and
 * required there), absent in a production install, where the emulator goes on with its own rules.
 */
import { afterEach, expect, test } from "bun:test";
import { contractPackage } from "../../src/platform/contract.ts";

const env = process.env.NODE_ENV;
afterEach(() => {
  process.env.NODE_ENV = env;
});

test("an installed contract package loads once and is shared", async () => {
  const load = contractPackage<typeof import("@atproto/lexicon")>("@atproto/lexicon");
  const first = await load();
  expect(typeof first?.jsonToLex).toBe("function");
  expect(await load()).toBe(first);
});

test("under the tests a missing contract package is an error, never a check silently skipped", async () => {
  process.env.NODE_ENV = "test";
  const err = await contractPackage("@crier-test/not-installed")().catch((e) => e);
  expect(String(err)).toContain("required by the tests");
});

test("in production a missing contract package is null: the sandbox emulator keeps its own rules", async () => {
  process.env.NODE_ENV = "production";
  expect(await contractPackage("@crier-test/not-installed")()).toBeNull();
});
