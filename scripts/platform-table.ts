// Prints the README's platform table from the plugin declarations: bun scripts/platform-table.ts
import { renderPlatformTable } from "./readme-table.ts";
import { createRegistry } from "../src/platform/host/registry.ts";

console.log(renderPlatformTable(createRegistry()));
