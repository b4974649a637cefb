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

/**
 * A ratio as the table shows it: two decimals, or three when two would round it onto the goal's boundary
 * (0.4973 against ≥ 0.5 reads "0.497 ×", not a "0.50 ×" marked as missed).
 */
export function times(x: number, boundary: number): string {
  return `${x.toFixed(Math.abs(x - boundary) < 0.005 ? 3 : 2)} ×`;
}
