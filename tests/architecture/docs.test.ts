/**
 * The repository carries its own documentation: no file points at notes outside it (a clone has only
 * the repository), and the paths docs/architecture.md names exist, so the map stays true as code moves.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const SKIP = new Set(["node_modules", ".git", "data", "dist", ".tmp"]);
const TEXT = /\.(ts|md|json|sql|toml|yml|yaml|sh)$|^(Dockerfile|run|smoke-binary)$/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIP.has(name) ? [] : files(path);
    return TEXT.test(name) && name !== "package-lock.json" ? [path] : [];
  });
}

// Written in pieces so this file does not match itself.
const OUTSIDE = [
  ["..", "/shared"].join(""),
  ["DESIGN", ".md"].join(""),
  ["STACK", "-NOTES"].join(""),
  ["api-spec", ".md"].join(""),
];

test("no file in the repository refers to documents outside it", () => {
  const all = files(ROOT);
  expect(all.length).toBeGreaterThan(100);
  const found: string[] = [];
  for (const path of all) {
    const lines = readFileSync(path, "utf8").split("\n");
    lines.forEach((line, i) => {
      for (const needle of OUTSIDE)
        if (line.includes(needle)) found.push(`${relative(ROOT, path)}:${i + 1} mentions ${needle}`);
    });
  }
  expect(found).toEqual([]);
});

test("every repository path docs/architecture.md names exists", () => {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const paths = new Set<string>();
  for (const m of doc.matchAll(/`([^`\s]+)`|^(\S+\/\S*)\s/gm)) {
    const candidate = (m[1] ?? m[2]).replace(/[),.:;]+$/, "");
    if (!/^(src|plugins|tests|migrations|scripts|bench|docs)\//.test(candidate)) continue;
    if (/[<>*]/.test(candidate)) continue; // a pattern such as plugins/<platform>/index.ts
    paths.add(candidate);
  }
  expect(paths.size).toBeGreaterThan(20);
  expect([...paths].filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
});
