/**
 * The page's style sheet. A provider's outcome is said in words beside its colour, so the colour
 * only repeats what the text says; each colour keeps a 4.5:1 contrast against the white page.
 */

/** The colour of each outcome as the page groups them; the browser test reads these. */
export const OUTCOME_COLOURS = {
  success: "#1a7f37",
  timeout: "#9a5b00",
  failure: "#c62828",
  skipped: "#5c6370",
  waiting: "#0b5cad",
} as const;

export type OutcomeGroup = keyof typeof OUTCOME_COLOURS;

/**
 * A latency bar's full width, in deadlines: a little past the deadline, so its line stays in sight
 * and a provider cut off at the deadline reaches it.
 */
export const SCALE_PAST_DEADLINE = 1.05;

/**
 * Where a latency sits on a row's track, as a share of its width: logarithmic (of 1 + ms) up to
 * SCALE_PAST_DEADLINE deadlines. On a linear scale a 26 ms answer against a 10 s deadline was a
 * one-pixel sliver beside a slow provider's bar; here it is a third of the track, and the
 * deadline's line sits near the end. The page's script computes the same (page-script.ts).
 */
export function latencyShare(latencyMs: number, deadlineMs: number): number {
  return Math.min(
    Math.log1p(Math.max(latencyMs, 0)) / Math.log1p(deadlineMs * SCALE_PAST_DEADLINE),
    1,
  );
}

const outcomeRules = Object.entries(OUTCOME_COLOURS)
  .map(([group, colour]) => `.outcome-${group} { --outcome: ${colour}; }`)
  .join("\n");

export const PAGE_STYLE = `:root {
  color-scheme: light;
  font-family: system-ui, sans-serif;
  line-height: 1.45;
}
body { margin: 0; background: #fff; color: #1b1f24; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
form, .token { display: grid; gap: 0.75rem; max-width: 40rem; }
.token { margin-top: 1rem; }
.field { display: grid; gap: 0.25rem; }
label { font-weight: 600; }
input, select, button {
  font: inherit;
  padding: 0.4rem 0.5rem;
  border: 1px solid #57606a;
  border-radius: 4px;
}
button {
  background: #0b5cad;
  color: #fff;
  border-color: #0b5cad;
  cursor: pointer;
  justify-self: start;
}
button.secondary { background: #fff; color: #0b5cad; padding: 0.15rem 0.5rem; }
:focus-visible { outline: 3px solid #e36209; outline-offset: 2px; }
fieldset {
  border: 1px solid #d0d7de;
  border-radius: 4px;
  display: flex;
  flex-wrap: wrap;
  gap: 0.25rem 1rem;
}
fieldset label { font-weight: 400; }
.note { color: #57606a; font-size: 0.9rem; margin: 0.25rem 0; }
#status { min-height: 1.5rem; font-weight: 600; }
.rows { list-style: none; padding: 0; margin: 0; display: grid; gap: 0.4rem; }
.row { display: grid; grid-template-columns: 10rem 1fr; gap: 0.1rem 0.75rem; align-items: center; }
.row .name { font-weight: 600; overflow-wrap: anywhere; }
.track { position: relative; height: 0.9rem; background: #eaeef2; border-radius: 2px; }
.bar {
  position: absolute;
  inset: 0 auto 0 0;
  min-width: 2px;
  width: 0;
  background: var(--outcome);
  border-radius: 2px;
}
.outcome-skipped .bar { display: none; }
.deadline {
  position: absolute;
  top: -0.2rem;
  bottom: -0.2rem;
  right: 0;
  width: 2px;
  margin-left: -1px;
  background: #1b1f24;
}
.outcome { grid-column: 2; font-size: 0.9rem; }
.swatch, .key::before {
  display: inline-block;
  width: 0.8rem;
  height: 0.8rem;
  margin-right: 0.35rem;
  vertical-align: -0.1rem;
  border-radius: 2px;
  background: var(--outcome);
}
.key::before { content: ""; }
/* A swatch never wraps away from its word. */
.key { margin-right: 0.75rem; white-space: nowrap; }
#search { margin-top: 1rem; }
.message { grid-column: 2; color: #57606a; font-size: 0.85rem; overflow-wrap: anywhere; }
.merged { padding-left: 1.75rem; display: grid; gap: 0.9rem; }
.hit .title { font-weight: 600; overflow-wrap: anywhere; }
.hit .locator { color: #57606a; font-size: 0.85rem; overflow-wrap: anywhere; }
.hit .snippet { margin: 0.2rem 0; overflow-wrap: anywhere; }
.meta { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; font-size: 0.85rem; }
.badge { background: #ddf4ff; color: #0a3069; border-radius: 1rem; padding: 0 0.5rem; }
.evidence {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
  max-height: 24rem;
  overflow: auto;
  background: #f6f8fa;
  padding: 0.5rem;
  border-radius: 4px;
  font-size: 0.85rem;
}
${outcomeRules}
`;
