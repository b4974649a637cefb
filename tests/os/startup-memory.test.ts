import { expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import { executableMappings } from "../../src/os/startup-memory.ts";

test("the executable's read-only data and code are paged out from source; its writable data and other files stay", () => {
  const exe = realpathSync(process.execPath);
  const maps = [
    `00200000-00400000 r--p 00000000 fe:00 1 ${exe}`,
    `00400000-00800000 r-xp 00200000 fe:00 1 ${exe}`,
    `00800000-00801000 rw-p 00600000 fe:00 1 ${exe}`,
    `00900000-00a00000 r--p 00000000 fe:00 2 /usr/lib/x86_64-linux-gnu/libc.so.6`,
    `00b00000-00c00000 rw-p 00000000 00:00 0`,
  ].join("\n");
  // Run from source, there are no embedded files, so no writable mapping qualifies.
  expect(Bun.embeddedFiles.length).toBe(0);
  expect(executableMappings(maps)).toEqual([
    { start: 0x200000, length: 0x200000, code: false },
    { start: 0x400000, length: 0x400000, code: true },
  ]);
});

test("this process's own maps name its executable's read-only data", () => {
  const found = executableMappings();
  expect(found.length).toBeGreaterThan(0);
  for (const m of found) expect(m.length).toBeGreaterThan(0);
});
