/**
 * The live line on stderr while a search runs ("2/3 providers answered"), driven by the plan and
 * provider events. Only on a terminal; it erases itself before the answer is printed.
 */
import type { Decision } from "../protocol/envelope-schema.ts";
import type { Paint } from "./paint.ts";

export type Progress = {
  plan: (decision: Decision) => void;
  answered: (provider: string, ok: boolean) => void;
  clear: () => void;
};

const NONE: Progress = { plan: () => {}, answered: () => {}, clear: () => {} };
const ERASE_LINE = "\r\u001b[2K";

export function progressLine(
  enabled: boolean,
  write: (text: string) => void,
  paint: Paint,
): Progress {
  if (!enabled) return NONE;
  let planned: number | null = null;
  const answered: string[] = [];
  let shown = false;
  const draw = () => {
    const count = planned === null
      ? "planning"
      : `${answered.length}/${planned} providers answered`;
    // Only the latest name: a line longer than the terminal wraps, and \r erases only its last row.
    const latest = answered.at(-1);
    const last = latest === undefined ? "" : paint.dim(` (latest: ${latest})`);
    write(`${ERASE_LINE}searching: ${count}${last}`);
    shown = true;
  };
  draw();
  return {
    plan: (decision) => {
      planned = decision.providers.length;
      draw();
    },
    answered: (provider, ok) => {
      answered.push(ok ? provider : paint.red(provider));
      draw();
    },
    clear: () => {
      if (shown) write(ERASE_LINE);
      shown = false;
    },
  };
}
