/** What people see: the live progress line and colour rules, without a terminal to run them in. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { NO_PAINT, paintFor } from "../src/cli/paint.ts";
import { progressLine } from "../src/cli/progress-line.ts";

describe("the CLI for people", () => {
  it("the progress line counts providers answered out of planned, then erases itself", () => {
    const written: string[] = [];
    const progress = progressLine(true, (t) => written.push(t), NO_PAINT);
    progress.plan({ tier: null, providers: ["a", "b", "c"], trimmed: [], skipped: [] });
    progress.answered("a", true);
    progress.answered("b", false);
    progress.clear();
    assert.deepEqual(written, [
      "\r\u001b[2Ksearching: planning",
      "\r\u001b[2Ksearching: 0/3 providers answered",
      "\r\u001b[2Ksearching: 1/3 providers answered (latest: a)",
      "\r\u001b[2Ksearching: 2/3 providers answered (latest: b)",
      "\r\u001b[2K",
    ]);
  });

  it("no progress line unless stderr is a terminal", () => {
    const written: string[] = [];
    const progress = progressLine(false, (t) => written.push(t), NO_PAINT);
    progress.plan({ tier: null, providers: ["a"], trimmed: [], skipped: [] });
    progress.answered("a", true);
    progress.clear();
    assert.deepEqual(written, []);
  });

  it("colour only on a terminal, and never with NO_COLOR", () => {
    assert.equal(paintFor(true, {}).red("x"), "\u001b[31mx\u001b[39m");
    assert.equal(paintFor(false, {}), NO_PAINT);
    assert.equal(paintFor(true, { NO_COLOR: "1" }), NO_PAINT);
    assert.notEqual(paintFor(true, { NO_COLOR: "" }), NO_PAINT, "an empty NO_COLOR does not count");
  });
});
