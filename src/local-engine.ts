/**
 * Where the engine of this copy (src/engine/scheduler.ts) registers itself and the API finds it: the one
 * meeting point of the two, so the posts module needs nothing from src/engine.
 */
import type { AppContext } from "./context.ts";

/** What the API can ask of an engine running in the same copy (there may be none: serve --no-scheduler). */
export interface LocalEngine {
  /** Due work exists now: look for it without waiting for the next tick. */
  kick(): void;
  /**
   * Claims the post's due targets right away and starts publishing them (not waiting for the outcome).
   * `beforeStart` runs once the claim is committed and before any publish starts: the moment the
   * targets are certainly processing.
   */
  claimPost(postId: string, beforeStart?: () => Promise<void>): Promise<void>;
}

const engines = new WeakMap<AppContext, LocalEngine>();

export const localEngine = (ctx: AppContext): LocalEngine | undefined => engines.get(ctx);
export const setLocalEngine = (ctx: AppContext, engine: LocalEngine) => void engines.set(ctx, engine);
/** Only the engine that is registered unregisters itself (a second engine on one context may stop first). */
export const clearLocalEngine = (ctx: AppContext, engine: LocalEngine) => {
  if (engines.get(ctx) === engine) engines.delete(ctx);
};
