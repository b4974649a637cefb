/**
 * Group commit for one statement that can take many items at once: items submitted while statements are
 * in flight share the next one, so a burst of requests costs a few statements (and commits) instead of
 * one each, and a lone item goes out at once. Each submitter's promise settles when the statement that
 * carried its item committed or failed, exactly as if it had run its own.
 *
 * A statement that fails for a reason of its data, not of the database (a lost connection, a
 * serialization failure or deadlock), is run again for each of its items alone, so one item's bad data
 * fails only its own submitter. Nothing of a failed statement was committed, so running an item again
 * cannot store it twice; a failure of the database itself is everyone's and is not repeated.
 */
import { isTransientError } from "./availability.ts";

export interface GroupCommitOptions<I, O> {
  /** Runs one statement for the items and answers one result per item, in their order. */
  run: (items: I[]) => Promise<O[]>;
  /** Items per statement at most. */
  maxBatch: number;
  /** Statements in flight at once at most (a few keep both the database and this process busy). */
  inFlight: number;
}

interface Waiting<I, O> {
  item: I;
  done: (o: O) => void;
  fail: (e: unknown) => void;
}

export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private running = 0;
  private scheduled = false;

  constructor(private readonly o: GroupCommitOptions<I, O>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((done, fail) => {
      this.queue.push({ item, done, fail });
      this.schedule();
    });
  }

  /** After this turn of the event loop, so requests read together share a statement. */
  private schedule() {
    if (this.scheduled || this.running >= this.o.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.queue.length && this.running < this.o.inFlight) void this.send(this.queue.splice(0, this.o.maxBatch));
    });
  }

  private async send(batch: Waiting<I, O>[]) {
    this.running++;
    try {
      await this.settle(batch);
    } finally {
      this.running--;
      if (this.queue.length) this.schedule();
    }
  }

  private async settle(batch: Waiting<I, O>[]) {
    try {
      const results = await this.o.run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.done(results[i]));
    } catch (e) {
      if (batch.length === 1 || isTransientError(e)) for (const w of batch) w.fail(e);
      else for (const w of batch) await this.settle([w]);
    }
  }
}
