/**
 * Status checks of submitted targets (the platform was still processing the post): leased like a publish
 * (claimPolls) and run beside the ticks, not inside them, so a slow platform never holds up claiming.
 */
import type { AppContext } from "../context.ts";
import { errorFields, type Logger } from "../log.ts";
import { claimPolls, pollTarget, type DispatchSettings } from "./dispatch.ts";

/** How many submitted targets one tick leases for checking at most. */
const CHECKS_PER_TICK = 50;

export class StatusChecks {
  private readonly checking = new Map<string, Promise<void>>();

  constructor(
    private readonly ctx: AppContext,
    private readonly settings: DispatchSettings,
    private readonly leaseMs: number,
    private readonly log: Logger,
  ) {}

  /** Targets this copy is checking right now (their leases are renewed every tick). */
  checkingIds(): string[] {
    return [...this.checking.keys()];
  }

  /** Leases the submitted targets whose next check is due and starts checking them. */
  async startDue(): Promise<void> {
    const due = await claimPolls(this.ctx, { ...this.settings, leaseMs: this.leaseMs }, CHECKS_PER_TICK);
    for (const id of due) {
      if (this.checking.has(id)) continue;
      this.checking.set(
        id,
        pollTarget(this.ctx, this.settings, id)
          .catch((e) => this.log.error("status check failed", { target_id: id, ...errorFields(e) }))
          .finally(() => this.checking.delete(id)),
      );
    }
  }

  /** Resolves when the checks running now have finished. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.checking.values()]);
  }
}
