// The rules live in src/platform/content-check.ts, shared with the workflow engine.
export { checkTarget, countHashtags, normalizeMedia, optionsForPlugin, type TargetCheck } from "../../platform/content-check.ts";
