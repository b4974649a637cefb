/**
 * Sandbox emulators whose state lives in a store (the sandbox_state table, through the sandbox module),
 * one document per sandbox profile and platform, instead of only in this process: every call first takes up what any copy saved last, and saves what it
 * changed over exactly the version it read. A copy that lost that race runs the call again on the newer
 * state, so ids handed out by two copies never collide. Within one copy calls to one platform run one at
 * a time, so they never race each other.
 */
import type { Emulator } from "../sdk.ts";

export interface SandboxStateStore {
  /** The profile's saved state of the platform when its version is not `known`; null when unchanged or never saved. */
  load(profileId: string, platform: string, known: number): Promise<{ version: number; doc: string } | null>;
  /** Saves over `version` (0: nothing saved yet); the new version, or null when another copy saved first. */
  save(profileId: string, platform: string, version: number, doc: string): Promise<number | null>;
}

/** A sandbox emulator that can also take up the store's state without a call (for the inbox). */
export interface PersistedEmulator extends Emulator {
  sync(): Promise<void>;
}

/** Attempts before a call gives up on a state other copies keep changing under it. */
const MAX_ATTEMPTS = 30;

/** A random pause growing with the attempts, so copies that keep colliding fall out of step. */
const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 * attempt)));

/** Runs tasks one after another. */
function serial() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}

export function persistedEmulator<E extends Emulator>(
  emulator: E,
  store: SandboxStateStore,
  profileId: string,
): E & PersistedEmulator {
  const state = emulator.state;
  if (!state) return Object.assign(emulator, { sync: async () => {} });
  const platform = emulator.platform;
  const inTurn = serial();
  let version = 0;
  // The document as last loaded or saved: a call that leaves the snapshot equal to it changed nothing.
  let saved = state.snapshot();

  async function load() {
    for (;;) {
      const newer = await store.load(profileId, platform, version);
      if (newer) {
        state!.restore(newer.doc);
        version = newer.version;
        saved = state!.snapshot();
        return;
      }
      if (version > 0) return;
      // Nothing saved yet: this copy's fresh state (its random page ids, keys) becomes everyone's,
      // unless another copy saved its own first.
      const first = await store.save(profileId, platform, 0, saved);
      if (first !== null) {
        version = first;
        return;
      }
    }
  }

  /** Runs `work` on the current state and saves what it changed; again on newer state if another copy saved first. */
  async function transact<T>(work: () => Promise<T>, rollback: () => void): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      await load();
      const out = await work();
      const doc = state!.snapshot();
      if (doc === saved) return out;
      const next = await store.save(profileId, platform, version, doc);
      if (next !== null) {
        version = next;
        saved = doc;
        return out;
      }
      rollback();
      if (attempt >= MAX_ATTEMPTS) throw new Error(`sandbox state of ${platform} kept changing under this call`);
      await backoff(attempt);
    }
  }

  const wrapped: E & PersistedEmulator = Object.create(emulator);
  wrapped.sync = () => inTurn(load);
  // Each attempt reads its own copy of the request: a call run again needs the body again.
  wrapped.handle = (req, path) =>
    inTurn(() =>
      transact(
        () => emulator.handle(req.clone(), path),
        () => {},
      ),
    );
  if (emulator.openSocket) {
    wrapped.openSocket = (path, send) => {
      // Frames a message produces go out once its state is saved, so a message run again after a lost
      // race does not answer twice; frames sent later (a signer's delayed answer) go out at once.
      let outbox: string[] | null = null;
      const session = emulator.openSocket!(path, (data) => (outbox ? outbox.push(data) : send(data)));
      const run = (data: string) =>
        transact(
          async () => {
            outbox = [];
            session.message(data);
          },
          () => (outbox = []),
        );
      return {
        message: (data) =>
          void inTurn(() => run(data))
            .then(() => {
              const out = outbox ?? [];
              outbox = null;
              for (const d of out) send(d);
            })
            .catch(() => (outbox = null)),
        close: () => session.close(),
      };
    };
  }
  return wrapped;
}
