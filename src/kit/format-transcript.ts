/**
 * formatTranscript(report): a conformance report as text a person reads top to bottom: per case,
 * the request sent, the answer received, the verdict and its reasons. The same report always
 * gives the same text, so a transcript can be committed and compared.
 */
import type { ConformanceReport } from "./conformance.ts";

export function formatTranscript(report: ConformanceReport): string {
  const passed = report.cases.filter((c) => c.verdict === "pass").length;
  const lines = [
    "TraceFetch provider conformance",
    `endpoint: ${report.endpoint}`,
    `declared: provider "${report.name}", scope "${report.scope}"`,
    `query:    ${JSON.stringify(report.query)}`,
    `result:   ${report.ok ? "PASS" : "FAIL"} (${passed} of ${report.cases.length} cases pass)`,
  ];
  report.cases.forEach((c, i) => {
    lines.push(
      "",
      `=== ${i + 1}/${report.cases.length} ${c.case}: ${c.verdict.toUpperCase()}`,
      `expects: ${c.expects}`,
      "",
      `> ${c.request.method} ${report.endpoint}`,
      ...Object.entries(c.request.headers).map(([name, value]) => `> ${name}: ${value}`),
      ">",
      `> ${c.request.body}`,
      "",
    );
    const r = c.response;
    if (r === null) {
      lines.push("< (no complete answer)");
    } else {
      lines.push(
        `< HTTP ${r.status}`,
        `< content-type: ${r.content_type ?? "(none)"}`,
        "<",
        ...r.body.split("\n").map((line) => `< ${line}`),
      );
      if (r.truncated) lines.push(`< ... (${r.bytes} bytes in all; the rest is not shown)`);
    }
    lines.push("");
    if (c.reasons.length === 0) lines.push("reasons: none");
    else lines.push("reasons:", ...c.reasons.map((reason) => `- ${reason}`));
  });
  return `${lines.join("\n")}\n`;
}
