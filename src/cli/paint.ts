/**
 * Terminal colour, or none. Colour only on a terminal and never with NO_COLOR (no-color.org: set
 * and not empty), so piped output and logs stay plain text.
 */
export type Paint = {
  bold: (text: string) => string;
  dim: (text: string) => string;
  red: (text: string) => string;
  green: (text: string) => string;
  yellow: (text: string) => string;
};

const plain = (text: string) => text;
const sgr = (open: number, close: number) => (text: string) =>
  `\u001b[${open}m${text}\u001b[${close}m`;

export const NO_PAINT: Paint = { bold: plain, dim: plain, red: plain, green: plain, yellow: plain };

const COLOURS: Paint = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
};

export function paintFor(isTTY: boolean, env: Record<string, string | undefined>): Paint {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== "";
  return isTTY && !noColor ? COLOURS : NO_PAINT;
}
