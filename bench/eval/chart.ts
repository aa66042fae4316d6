/**
 * The evaluation report's picture, as one self-contained SVG: grouped bars of every setup's mean
 * metrics, and a per-query scatter of two setups' nDCG@10.
 *
 * Boundary: string building only; no I/O, no dependencies.
 *
 * Invariants:
 * - Every caller-supplied text is escaped before it reaches the markup.
 * - The scatter draws exactly one <circle> per point; nothing else uses circles.
 * - Scores are drawn on a fixed 0..1 scale (out-of-range values are clamped, NaN drawn as 0) so
 *   charts of different runs compare by eye.
 */
import { METRIC_LABELS, METRIC_NAMES, type Metrics } from "../../src/cli/replay/metrics.ts";

export type ChartSetup = {
  /** E.g. "central", "federated", "methods: bm25". */
  label: string;
  mean: Metrics;
};

export type ChartPoint = {
  query_id: string;
  /** The x setup's nDCG@10 for this query. */
  x: number;
  /** The y setup's nDCG@10 for this query. */
  y: number;
};

export type ChartScatter = {
  /** The setup on the x axis, e.g. "central". */
  x_label: string;
  /** The setup on the y axis, e.g. "federated". */
  y_label: string;
  points: readonly ChartPoint[];
};

export type ChartInput = {
  title: string;
  /** One bar per setup in each metric's group, in this order. */
  setups: readonly ChartSetup[];
  /** Omitted when there is no second setup to compare against. */
  scatter?: ChartScatter;
};

/** Layout in SVG user units; the width fits a README column. */
const WIDTH = 760;
const MARGIN_LEFT = 60;
const MARGIN_RIGHT = 20;
const TITLE_HEIGHT = 40;
const BAR_PLOT_HEIGHT = 240;
const AXIS_LABEL_HEIGHT = 30;
const LEGEND_COLUMNS = 3;
const LEGEND_ROW_HEIGHT = 20;
const SCATTER_SIZE = 320;
const SCATTER_GAP = 60;
/** Below this bar width a value label would overlap its neighbours; the tooltip still has it. */
const MIN_LABELLED_BAR_WIDTH = 24;
const GRID_STEPS = [0, 0.25, 0.5, 0.75, 1];

/** Colour-blind-safe (Okabe-Ito); setups beyond eight reuse colours in order. */
const PALETTE = [
  "#0072b2",
  "#e69f00",
  "#009e73",
  "#cc79a7",
  "#56b4e9",
  "#d55e00",
  "#f0e442",
  "#000000",
];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

const unit = (
  value: number,
): number => (Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0);
const fixed = (value: number): string => (Number.isFinite(value) ? value.toFixed(3) : "n/a");
/** Coordinates to a tenth of a unit: finer is invisible and only bloats the file. */
const px = (value: number): number => Math.round(value * 10) / 10;
const colour = (index: number): string => PALETTE[index % PALETTE.length] as string;

function text(x: number, y: number, content: string, attributes = ""): string {
  return `<text x="${px(x)}" y="${px(y)}"${attributes ? ` ${attributes}` : ""}>${
    escapeXml(content)
  }</text>`;
}

/** Horizontal grid lines with their values, over a plot from `top` down `height` units. */
function grid(left: number, right: number, top: number, height: number): string[] {
  return GRID_STEPS.map((step) => {
    const y = top + height * (1 - step);
    return `<line x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="#ddd"/>` +
      text(left - 6, y + 4, step.toFixed(2), 'text-anchor="end"');
  });
}

function bars(setups: readonly ChartSetup[], top: number): { parts: string[]; bottom: number } {
  const right = WIDTH - MARGIN_RIGHT;
  const groupWidth = (right - MARGIN_LEFT) / METRIC_NAMES.length;
  const barWidth = (groupWidth * 0.8) / Math.max(1, setups.length);
  const parts = grid(MARGIN_LEFT, right, top, BAR_PLOT_HEIGHT);
  METRIC_NAMES.forEach((metric, group) => {
    const groupLeft = MARGIN_LEFT + group * groupWidth + groupWidth * 0.1;
    setups.forEach((setup, index) => {
      const value = setup.mean[metric];
      const height = BAR_PLOT_HEIGHT * unit(value);
      const x = groupLeft + index * barWidth;
      const y = top + BAR_PLOT_HEIGHT - height;
      const tip = `${setup.label}: ${METRIC_LABELS[metric]} ${fixed(value)}`;
      parts.push(
        `<rect x="${px(x)}" y="${px(y)}" width="${px(barWidth - 2)}" height="${px(height)}" fill="${
          colour(index)
        }"><title>${escapeXml(tip)}</title></rect>`,
      );
      if (barWidth >= MIN_LABELLED_BAR_WIDTH) {
        const label = Number.isFinite(value) ? value.toFixed(2) : "n/a";
        parts.push(text(x + barWidth / 2 - 1, y - 4, label, 'text-anchor="middle" font-size="10"'));
      }
    });
    const labelY = top + BAR_PLOT_HEIGHT + 20;
    parts.push(
      text(
        MARGIN_LEFT + (group + 0.5) * groupWidth,
        labelY,
        METRIC_LABELS[metric],
        'text-anchor="middle"',
      ),
    );
  });
  const legendTop = top + BAR_PLOT_HEIGHT + AXIS_LABEL_HEIGHT;
  const columnWidth = (right - MARGIN_LEFT) / LEGEND_COLUMNS;
  setups.forEach((setup, index) => {
    const x = MARGIN_LEFT + (index % LEGEND_COLUMNS) * columnWidth;
    const y = legendTop + Math.floor(index / LEGEND_COLUMNS) * LEGEND_ROW_HEIGHT;
    parts.push(`<rect x="${px(x)}" y="${px(y)}" width="12" height="12" fill="${colour(index)}"/>`);
    parts.push(text(x + 18, y + 11, setup.label));
  });
  const rows = Math.ceil(setups.length / LEGEND_COLUMNS);
  return { parts, bottom: legendTop + rows * LEGEND_ROW_HEIGHT };
}

function scatter(input: ChartScatter, top: number): { parts: string[]; bottom: number } {
  const left = MARGIN_LEFT + 20;
  const size = SCATTER_SIZE;
  const parts = [
    text(
      left,
      top - 12,
      `Per-query nDCG@10 (${input.points.length} queries)`,
      'font-weight="bold"',
    ),
    ...grid(left, left + size, top, size),
    `<rect x="${left}" y="${top}" width="${size}" height="${size}" fill="none" stroke="#999"/>`,
    `<line x1="${left}" y1="${top + size}" x2="${left + size}" y2="${top}" stroke="#999" ` +
    `stroke-dasharray="4 4"/>`,
  ];
  for (const point of input.points) {
    const cx = left + size * unit(point.x);
    const cy = top + size * (1 - unit(point.y));
    const tip = `query ${point.query_id}: ${fixed(point.x)} vs ${fixed(point.y)}`;
    parts.push(
      `<circle cx="${px(cx)}" cy="${px(cy)}" r="3.5" fill="#0072b2" fill-opacity="0.5">` +
        `<title>${escapeXml(tip)}</title></circle>`,
    );
  }
  const keyX = left + size + 24;
  parts.push(text(keyX, top + 16, `above the diagonal: ${input.y_label} scores higher`));
  parts.push(text(keyX, top + 34, `below the diagonal: ${input.x_label} scores higher`));
  const axisY = top + size + 36;
  parts.push(text(left + size / 2, axisY, `${input.x_label} nDCG@10`, 'text-anchor="middle"'));
  const midY = top + size / 2;
  parts.push(
    text(
      left - 44,
      midY,
      `${input.y_label} nDCG@10`,
      `text-anchor="middle" transform="rotate(-90 ${left - 44} ${midY})"`,
    ),
  );
  return { parts, bottom: axisY + 10 };
}

/** The whole chart as an SVG document string. */
export function renderChart(input: ChartInput): string {
  const head = text(MARGIN_LEFT, 26, input.title, 'font-size="16" font-weight="bold"');
  const barPanel = bars(input.setups, TITLE_HEIGHT + 20);
  const scatterPanel = input.scatter === undefined
    ? { parts: [], bottom: barPanel.bottom }
    : scatter(input.scatter, barPanel.bottom + SCATTER_GAP);
  const height = Math.ceil(scatterPanel.bottom + 20);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" ` +
    `viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    head,
    ...barPanel.parts,
    ...scatterPanel.parts,
    "</svg>",
  ].join("\n");
}
