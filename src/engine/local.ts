import type { AppContext } from "../context.ts";

/** What the API can ask of an engine running in the same copy (there may be none: serve --no-scheduler). */
export interface LocalEngine {
  /** Due work exists now: look for it without waiting for the next tick. */
  kick(): void;
  /** Claims the post's due targets right away and starts publishing them (not waiting for the outcome). */
  claimPost(postId: string): Promise<void>;
}

const engines = new WeakMap<AppContext, LocalEngine>();

export const localEngine = (ctx: AppContext): LocalEngine | undefined => engines.get(ctx);
export const setLocalEngine = (ctx: AppContext, engine: LocalEngine | undefined) => {
  if (engine) engines.set(ctx, engine);
  else engines.delete(ctx);
};
