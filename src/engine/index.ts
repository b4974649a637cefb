export { createEngine, startEngine, runTick, ENGINE_DEFAULTS, type Engine, type EngineOptions } from "./scheduler.ts";
export { postStatus, isTerminal, type PostStatus, type TargetStatus } from "./status.ts";
