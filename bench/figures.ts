// One line per figure a benchmark checks against its goal; bench/run.ts collects them into one table.
export interface Figure {
  figure: string;
  value: string;
  goal: string;
  met: boolean;
}

export const FIGURE_PREFIX = "@figure ";

export function figure(name: string, value: string, goal: string, met: boolean): void {
  console.log(`${FIGURE_PREFIX}${JSON.stringify({ figure: name, value, goal, met } satisfies Figure)}`);
}
