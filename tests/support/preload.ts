// Loaded before every test file (bunfig.toml). Tests log nothing unless asked to.
import { setDefaultTimeout } from "bun:test";

process.env.LOG_LEVEL ??= "silent";
// Opening a fresh database and starting real processes takes seconds on a loaded 2-core machine;
// `npm test` passes --timeout 60000 too, this covers `bun test FILE` run by hand.
setDefaultTimeout(60_000);
