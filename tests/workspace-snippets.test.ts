/**
 * The workspace built-in shows documents as written: Markdown's marks are dropped, the text of an
 * identifier is not; a table's rule row, a code fence's line and a title's backticks are layout,
 * and never reach a snippet or a title.
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

  it("drops a table's rule row and a code fence's line (with its language), keeping cells and code", () => {
    const doc = parseMarkdownDocument(
      [
        "# Limits",
        "",
        "| bound | value |",
        "| ----- | :---: |",
        "| body  | 1 MiB |",
        "",
        "```sh",
        "npm start",
        "```",
        "",
        "---",
        "Done.",
      ].join("\n"),
      "docs/x.md",
    );
    const flat = doc.text.replace(/\s+/g, " ").trim();
    assert.equal(flat, "Limits bound value body 1 MiB npm start Done.");
  });

  it("a title drops backticks and emphasis, as the text does", () => {
    const doc = parseMarkdownDocument(
      "# The `tracefetch` *CLI* and exit_code\n\nText.\n",
      "docs/x.md",
    );
    assert.equal(doc.title, "The tracefetch CLI and exit_code");
  });
});
