// Prints the OpenAPI description the server serves at /openapi.json, or writes it to the file named, built
// from the app with no database and no listening socket: `bun scripts/openapi.ts [outfile]`.
// `npm run lint:openapi` writes dist/openapi.json this way and lints it with Redocly (redocly.yaml).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { openApiDocument } from "../src/http/openapi-dump.ts";

const text = await openApiDocument();
const out = process.argv[2];
if (out) {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
} else process.stdout.write(text);
