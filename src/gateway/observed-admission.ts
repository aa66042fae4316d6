/**
 * A search's admission as the metrics see it (docs/deploy.md, "Observing it"): every search is
 * counted once with the code its caller was answered with, a refusal at admission included, and
 * timed from admission to the answer handed over.
 */
import { CALLER_REFUSAL_CODES, type MetricsPort } from "../core/telemetry.ts";
import type { Admission } from "./search-run.ts";

export function observedAdmission(
  metrics: MetricsPort,
  now: () => number,
  admit: () => Admission | Promise<Admission>,
): Admission | Promise<Admission> {
  const started = now();
  const seen = (admission: Admission): Admission => {
    if (!admission.ok) {
      const { code } = admission.envelope;
      metrics.searched(code, (now() - started) / 1000);
      if (CALLER_REFUSAL_CODES.has(code)) metrics.refused(code);
      return admission;
    }
    const { search } = admission;
    return {
      ok: true,
      search: {
        run: (options, deliver) =>
          search.run(options, (run) => {
            metrics.searched(run.envelope.code, (now() - started) / 1000);
            return deliver(run);
          }),
      },
    };
  };
  const admission = admit();
  return admission instanceof Promise ? admission.then(seen) : seen(admission);
}
