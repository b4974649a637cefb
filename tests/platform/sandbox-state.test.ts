/**
 * Persisted sandbox emulators: two copies' emulators over one store hand out ids as one emulator would,
 * even when their calls interleave, and a new emulator takes up the saved state.
 */
import { describe, expect, test } from "bun:test";
import { createTelegramEmulator, SANDBOX_BOT_TOKEN } from "../../plugins/telegram/emulator.ts";
import { decodeState, encodeState } from "../../src/platform/emulator-state.ts";
import { persistedEmulator, type SandboxStateStore } from "../../src/platform/host/sandbox-state.ts";

const PROFILE = "00000000-0000-4000-8000-000000000001";

/** The store in memory, with a pause on every call so calls of two copies interleave. */
function memoryStore(): SandboxStateStore & { saves: number; conflicts: number } {
  const rows = new Map<string, { version: number; doc: string }>();
  const pause = () => new Promise((r) => setTimeout(r, Math.random() * 3));
  return {
    saves: 0,
    conflicts: 0,
    async load(profileId, platform, known) {
      await pause();
      const row = rows.get(`${profileId} ${platform}`);
      return row && row.version !== known ? { ...row } : null;
    },
    async save(profileId, platform, version, doc) {
      await pause();
      const current = rows.get(`${profileId} ${platform}`)?.version ?? 0;
      if (current !== version) {
        this.conflicts++;
        return null;
      }
      this.saves++;
      rows.set(`${profileId} ${platform}`, { version: version + 1, doc });
      return version + 1;
    },
  };
}

const send = (emu: { handle(r: Request, p: string): Promise<Response> }, chat: number, text: string) =>
  emu
    .handle(
      new Request(`http://localhost/bot${SANDBOX_BOT_TOKEN}/sendMessage`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ chat_id: chat, text }),
      }),
      `/bot${SANDBOX_BOT_TOKEN}/sendMessage`,
    )
    .then((r) => r.json() as Promise<{ ok: boolean; result: { message_id: number } }>);

describe("persisted sandbox emulators", () => {
  test("two copies sending at once never hand out the same message id", async () => {
    const store = memoryStore();
    const a = persistedEmulator(createTelegramEmulator(), store, PROFILE);
    const chat = a.channel("@shared", { title: "shared" });
    await a.sync();
    const b = persistedEmulator(createTelegramEmulator(), store, PROFILE);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? a : b, chat, `message ${i}`)));
    expect(answers.every((r) => r.ok)).toBe(true);
    const ids = answers.map((r) => r.result.message_id).sort((x, y) => x - y);
    expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // The copies did race: some saves were refused and their calls ran again on the newer state.
    expect(store.conflicts).toBeGreaterThan(0);
  });

  test("a new emulator continues from the saved state", async () => {
    const store = memoryStore();
    const a = persistedEmulator(createTelegramEmulator(), store, PROFILE);
    const chat = a.channel("@kept", { title: "kept" });
    expect((await send(a, chat, "one")).result.message_id).toBe(1);
    const restarted = persistedEmulator(createTelegramEmulator(), store, PROFILE);
    expect((await send(restarted, chat, "two")).result.message_id).toBe(2);
    await restarted.sync();
    expect(restarted.posts().map((p) => p.text)).toEqual(["one", "two"]);
  });

  test("the state codec keeps maps, sets, dates, bytes and Infinity", () => {
    const value = {
      m: new Map([["k", { at: new Date(5) }]]),
      s: new Set([1, 2]),
      b: new Uint8Array([1, 2, 3]),
      big: new Uint8Array(300 * 1024),
      inf: Infinity,
    };
    const back = decodeState(encodeState(value)) as typeof value;
    expect(back.m.get("k")!.at).toEqual(new Date(5));
    expect([...back.s]).toEqual([1, 2]);
    expect([...back.b]).toEqual([1, 2, 3]);
    // Large media bytes are not kept, as for media an emulator evicted.
    expect(back.big).toBeNull();
    expect(back.inf).toBe(Infinity);
  });
});
