import { SignInRateLimited } from "./errors.ts";

/**
 * argon2id costs tens of milliseconds of CPU per hash or verify, on purpose. Run unbounded, a burst of
 * sign-ins (each a different user and address, so no throttle holds it back) occupies every core for
 * seconds; here at most PASSWORD_CHECKS_AT_ONCE run at a time and the rest wait in line, and past
 * PASSWORD_CHECKS_WAITING waiting the newcomer is answered 429 at once instead of adding to the line.
 */
export const PASSWORD_CHECKS_AT_ONCE = 2;
export const PASSWORD_CHECKS_WAITING = 64;

export class PasswordWork {
  private running = 0;
  private waiting: (() => void)[] = [];
  /** The most checks seen running at once since the last resetPeak() (tests and diagnostics). */
  peak = 0;

  constructor(
    private readonly atOnce: number,
    private readonly maxWaiting: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.atOnce) {
      if (this.waiting.length >= this.maxWaiting) throw new SignInRateLimited(1);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    // A slot is held from here: either taken above or handed over by the one that finished.
    this.peak = Math.max(this.peak, this.running);
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  resetPeak() {
    this.peak = this.running;
  }
}

/** One per process: the CPU it protects is the process's. */
export const passwordWork = new PasswordWork(PASSWORD_CHECKS_AT_ONCE, PASSWORD_CHECKS_WAITING);
