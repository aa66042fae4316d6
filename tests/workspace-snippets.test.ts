/**
 * The workspace built-in shows documents as written: Markdown's marks are dropped, the text of an
 * identifier is not.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseMarkdownDocument } from "../providers/corpus/corpus-adapter.ts";

describe("workspace documents", () => {
  it("keeps underscores inside identifiers and drops emphasis marks", () => {
    const doc = parseMarkdownDocument(
      "# Codes\n\nRead `exit_code` and __retry_after_ms__, then _act_ on *it*.\n",
      "docs/x.md",
    );
    assert.match(doc.text, /Read exit_code and retry_after_ms, then act on it\./);
  });
});
