/**
 * The import rules of the layout, read from the source so they stay true: the plugin contract and the
 * plugins depend on no module and not on the engine, the engine on no module, the posts module not on
 * the engine, plugins only on the SDK side of src/platform (never on src/platform/host), and the media
 * pipeline (src/media) on no module and not on the engine.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

interface Import {
  file: string;
  line: number;
  specifier: string;
  /** Repository-relative path of what is imported; null for packages. */
  target: string | null;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : tsFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

// Static imports and re-exports (`import … from`, `import type … from`, `export … from`, bare
// `import "x"`) and dynamic `import("x")`. Comments are blanked first so prose cannot count.
const STATIC = /\b(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']/g;
const DYNAMIC = /\bimport\s*\(\s*["']([^"']+)["']\s*[,)]/g;

function withoutComments(text: string): string {
  return text
    .replace(/(^|[\s;{}(),])\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, (_, p) => p);
}

/** The imports of one file, given its absolute path and its text, in the order of their lines. */
function importsOf(path: string, source: string): Import[] {
  const text = withoutComments(source);
  const file = relative(ROOT, path);
  const found: Import[] = [];
  for (const re of [STATIC, DYNAMIC]) {
    for (const m of text.matchAll(re)) {
      const specifier = m[1];
      const target = specifier.startsWith(".") ? relative(ROOT, resolve(dirname(path), specifier)) : null;
      found.push({ file, line: text.slice(0, m.index).split("\n").length, specifier, target });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

interface Rule {
  name: string;
  from: (file: string) => boolean;
  forbidden: (target: string) => boolean;
}

const under = (folder: string) => (path: string) => path === folder || path.startsWith(folder + "/");

const RULES: Rule[] = [
  {
    name: "src/platform and plugins/ import nothing from src/modules",
    from: (f) => under("src/platform")(f) || under("plugins")(f),
    forbidden: under("src/modules"),
  },
  {
    name: "src/platform and plugins/ import nothing from src/engine",
    from: (f) => under("src/platform")(f) || under("plugins")(f),
    forbidden: under("src/engine"),
  },
  { name: "src/engine imports no module", from: under("src/engine"), forbidden: under("src/modules") },
  {
    name: "the posts module imports nothing from src/engine",
    from: under("src/modules/posts"),
    forbidden: under("src/engine"),
  },
  {
    name: "plugins import only the SDK side of src/platform, never src/platform/host",
    from: under("plugins"),
    forbidden: under("src/platform/host"),
  },
  {
    name: "src/media imports nothing from src/modules or src/engine",
    from: under("src/media"),
    forbidden: (t) => under("src/modules")(t) || under("src/engine")(t),
  },
];

function violations(files: { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    for (const imp of importsOf(path, text)) {
      if (imp.target === null) continue;
      for (const rule of RULES) {
        if (rule.from(imp.file) && rule.forbidden(imp.target))
          out.push(`${imp.file}:${imp.line} imports "${imp.specifier}" (${rule.name})`);
      }
    }
  }
  return out;
}

test("the import rules hold in src/ and plugins/", () => {
  const sources = [...tsFiles(join(ROOT, "src")), ...tsFiles(join(ROOT, "plugins"))].map((path) => ({
    path,
    text: readFileSync(path, "utf8"),
  }));
  expect(sources.length).toBeGreaterThan(100);
  expect(violations(sources)).toEqual([]);
});

test("the reader sees every form of import, and names the file, line and import that break a rule", () => {
  const platformFile = {
    path: join(ROOT, "src/platform/probe.ts"),
    text: [
      `// import { x } from "../modules/posts/service.ts"; (a comment: not an import)`,
      `import { a } from "../modules/accounts/service.ts";`,
      `import type { B } from "../engine/claim.ts";`,
      `export { c } from "../modules/media/ids.ts";`,
      `import {`,
      `  d,`,
      `} from "../engine/recorder.ts";`,
      `const e = await import("../modules/drafts/service.ts");`,
      `import "../engine/housekeeping.ts";`,
      `/* import { g } from "../modules/keys/service.ts"; */ const accept = "*/*";`,
      `import { t } from "elysia";`,
      `import { f } from "./sdk.ts";`,
    ].join("\n"),
  };
  const rest = [
    {
      path: join(ROOT, "plugins/probe/index.ts"),
      text: `import { createProviderHttp } from "../../src/platform/host/provider-http.ts";\nimport { definePlugin } from "../../src/platform/sdk.ts";`,
    },
    {
      path: join(ROOT, "src/engine/probe.ts"),
      text: `import type { Post } from "../modules/posts/model.ts";\nimport { optionsForPlugin } from "../platform/host/options.ts";`,
    },
    {
      path: join(ROOT, "src/modules/posts/probe.ts"),
      text: `import { createEngine } from "../../engine/scheduler.ts";\nimport { DeleteResult } from "../accounts/model.ts";`,
    },
    {
      path: join(ROOT, "src/media/probe-rule.ts"),
      text: [
        `import { media } from "../db/schema.ts";`,
        `import type { Storage } from "../storage/storage.ts";`,
        `import { getMedia } from "../modules/media/service.ts";`,
        `import { createEngine } from "../engine/scheduler.ts";`,
      ].join("\n"),
    },
  ];
  const modules = "src/platform and plugins/ import nothing from src/modules";
  const engine = "src/platform and plugins/ import nothing from src/engine";
  expect(violations([platformFile, ...rest])).toEqual([
    `src/platform/probe.ts:2 imports "../modules/accounts/service.ts" (${modules})`,
    `src/platform/probe.ts:3 imports "../engine/claim.ts" (${engine})`,
    `src/platform/probe.ts:4 imports "../modules/media/ids.ts" (${modules})`,
    `src/platform/probe.ts:5 imports "../engine/recorder.ts" (${engine})`,
    `src/platform/probe.ts:8 imports "../modules/drafts/service.ts" (${modules})`,
    `src/platform/probe.ts:9 imports "../engine/housekeeping.ts" (${engine})`,
    `plugins/probe/index.ts:1 imports "../../src/platform/host/provider-http.ts" (plugins import only the SDK side of src/platform, never src/platform/host)`,
    `src/engine/probe.ts:1 imports "../modules/posts/model.ts" (src/engine imports no module)`,
    `src/modules/posts/probe.ts:1 imports "../../engine/scheduler.ts" (the posts module imports nothing from src/engine)`,
    `src/media/probe-rule.ts:3 imports "../modules/media/service.ts" (src/media imports nothing from src/modules or src/engine)`,
    `src/media/probe-rule.ts:4 imports "../engine/scheduler.ts" (src/media imports nothing from src/modules or src/engine)`,
  ]);
});
