/**
 * Seconds, from a cached answer (a few milliseconds) to the longest provider timeout a manifest
 * usually sets (30 s): the OpenTelemetry HTTP duration buckets, stretched to 30 s. Every metrics
 * adapter uses them, so Prometheus and OTLP agree.
 */
export const DURATION_BUCKETS_SECONDS = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.075,
  0.1,
  0.25,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10,
  30,
];
