/**
 * The extraction evaluation's picture, one self-contained SVG: F1, precision and recall of each
 * extractor, grouped by half of the benchmark, on a fixed scale from AXIS_MIN to 1 so that charts
 * of different runs compare by eye (every extractor worth charting scores above it; a bar below is
 * drawn at the axis).
 *
 * Boundary: string building only; no I/O.
 */
import type { Scores } from "./shingle-f1.ts";

/** The lowest score on the axis: the extractors compared differ in the second decimal. */
const AXIS_MIN = 0.85;
const WIDTH = 760;
const HEIGHT = 340;
const LEFT = 60;
const RIGHT = 20;
const TOP = 50;
const BOTTOM = 70;
const GRID = [0.85, 0.9, 0.95, 1];
/** Okabe-Ito, colour-blind safe: ours first. */
const COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7"];
const METRICS = ["f1", "precision", "recall"] as const;

type Row = { extractor: string; half: string; scores: Scores };

const escape = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function renderExtractionChart(rows: readonly Row[]): string {
  const extractors = [...new Set(rows.map((r) => r.extractor))];
  const halves = [...new Set(rows.map((r) => r.half))];
  const groups = halves.flatMap((half) => METRICS.map((metric) => ({ half, metric })));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const groupWidth = plotWidth / groups.length;
  const barWidth = (groupWidth * 0.7) / extractors.length;
  const y = (value: number) => {
    const clamped = Math.min(1, Math.max(AXIS_MIN, Number.isFinite(value) ? value : AXIS_MIN));
    return TOP + plotHeight * (1 - (clamped - AXIS_MIN) / (1 - AXIS_MIN));
  };
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${
      WIDTH / 2
    }" y="20" text-anchor="middle" font-size="14">Article extraction benchmark: token-shingle F1, precision, recall</text>`,
  ];
  for (const g of GRID) {
    parts.push(
      `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(g)}" y2="${y(g)}" stroke="#ddd"/><text x="${
        LEFT - 6
      }" y="${y(g) + 4}" text-anchor="end">${g.toFixed(2)}</text>`,
    );
  }
  groups.forEach(({ half, metric }, i) => {
    const x0 = LEFT + i * groupWidth + groupWidth * 0.15;
    extractors.forEach((extractor, e) => {
      const value = rows.find((r) =>
        r.extractor === extractor && r.half === half
      )?.scores[metric] ??
        0;
      const top = y(value);
      parts.push(
        `<rect x="${x0 + e * barWidth}" y="${top}" width="${barWidth - 1}" height="${
          TOP + plotHeight - top
        }" fill="${COLOURS[e % COLOURS.length]}"><title>${
          escape(`${extractor}, ${half}, ${metric}: ${value.toFixed(3)}`)
        }</title></rect>`,
        `<text x="${x0 + (e + 0.5) * barWidth}" y="${top - 3}" text-anchor="middle" font-size="8">${
          value.toFixed(3).slice(1)
        }</text>`,
      );
    });
    parts.push(
      `<text x="${x0 + (extractors.length * barWidth) / 2}" y="${
        TOP + plotHeight + 14
      }" text-anchor="middle">${escape(metric === "f1" ? "F1" : metric)}</text>`,
    );
    if (metric === "precision") {
      parts.push(
        `<text x="${x0 + (extractors.length * barWidth) / 2}" y="${
          TOP + plotHeight + 30
        }" text-anchor="middle" font-weight="bold">${escape(half)}</text>`,
      );
    }
  });
  extractors.forEach((extractor, e) => {
    const x = LEFT + e * 160;
    parts.push(
      `<rect x="${x}" y="${HEIGHT - 22}" width="12" height="12" fill="${
        COLOURS[e % COLOURS.length]
      }"/><text x="${x + 18}" y="${HEIGHT - 12}">${escape(extractor)}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}
