// Loaded before every test file (bunfig.toml). Tests log nothing unless asked to.
// Opening fresh databases and starting real processes takes seconds on a loaded 2-core machine:
// `npm test` passes --timeout 60000; pass it too when running `bun test FILE` by hand.
process.env.LOG_LEVEL ??= "silent";
