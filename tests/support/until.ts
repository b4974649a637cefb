/** Polls `probe` every `everyMs` until it gives a value (anything but undefined), for at most `seconds`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  seconds = 40,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) throw new Error(`gave up waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}
