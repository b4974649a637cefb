// Prints the README's analytics table from the plugin declarations: bun scripts/analytics-table.ts
import { renderAnalyticsTable } from "./readme-table.ts";
import { createRegistry } from "../src/platform/host/registry.ts";

console.log(renderAnalyticsTable(createRegistry()));
