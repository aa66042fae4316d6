/**
 * formatTranscript(report): a conformance report as text a person reads top to bottom: per case,
 * the request sent, the answer received, the verdict and its reasons. The same report always
 * gives the same text, so a transcript can be committed and compared.
 */
import type { ConformanceReport } from "./conformance.ts";

export function formatTranscript(report: ConformanceReport): string {
  const passed = report.cases.filter((c) => c.verdict === "pass").length;
  const notChecked = report.cases.filter((c) => c.verdict === "not_checked").length;
  const said = report.reported === null
    ? "no answer names a provider and scope"
    : `the provider says provider "${report.reported.provider}", scope "${report.reported.scope}"`;
  const lines = [
    "TraceFetch provider conformance",
    `endpoint: ${report.endpoint}`,
    report.name === null || report.scope === null
      ? `declared: nothing, so identity is not checked; ${said}`
      : `declared: provider "${report.name}", scope "${report.scope}"`,
    `query:    ${JSON.stringify(report.query)}`,
    `result:   ${report.ok ? "PASS" : "FAIL"} (${passed} of ${report.cases.length} cases pass${
      notChecked === 0 ? "" : `, ${notChecked} not checked`
    })`,
  ];
  report.cases.forEach((c, i) => {
    lines.push(
      "",
      `=== ${i + 1}/${report.cases.length} ${c.case}: ${c.verdict.replace("_", " ").toUpperCase()}`,
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
