/**
 * Memory of one child process, read from /proc/<pid>/status (Linux): VmRSS now and VmHWM, the peak.
 * Writing 5 to /proc/<pid>/clear_refs resets the peak to the current RSS, so a peak read after a
 * search is that search's peak; a 10 ms sampler backs it up where clear_refs is not permitted.
 */
import { readFileSync, writeFileSync } from "node:fs";

export type Vm = { rss: number; hwm: number };

export function readVm(pid: number): Vm {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
    return match ? Number(match[1]) * 1024 : Number.NaN;
  };
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

/** Resets VmHWM to the current RSS; false when the kernel refuses. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

export type Sampler = {
  /** Highest RSS seen so far. */
  peak: () => number;
  stop: () => number;
};

/** Samples VmRSS every `everyMs`; `onSample` may stop the experiment (return true). */
export function sampleRss(
  pid: number,
  everyMs: number,
  onSample: (rss: number) => void = () => {},
): Sampler {
  let peak = 0;
  const tick = () => {
    try {
      const { rss } = readVm(pid);
      if (rss > peak) peak = rss;
      onSample(rss);
    } catch {
      // The process is gone; keep the peak seen so far.
    }
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    peak: () => peak,
    stop: () => {
      clearInterval(timer);
      tick();
      return peak;
    },
  };
}
