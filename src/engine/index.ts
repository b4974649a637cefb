export { createEngine, startEngine, runTick, ENGINE_DEFAULTS, type Engine, type EngineOptions } from "./scheduler.ts";
