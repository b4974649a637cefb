export {
  createEngine,
  startEngine,
  runUntilIdle,
  ENGINE_DEFAULTS,
  type Engine,
  type EngineOptions,
} from "./scheduler.ts";
export { PERIODIC_JOBS, type PeriodicJob } from "./jobs.ts";
export { postStatus, isTerminal, type PostStatus, type TargetStatus } from "../domain/status.ts";
