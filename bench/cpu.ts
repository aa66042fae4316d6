/**
 * Process CPU time as the kernel counts it (Linux `/proc/<pid>/stat`: user + system time of every
 * thread), read from outside the process, so one measure serves a Node child, a Deno process and
 * workerd alike, and the harness's own load client never counts.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of the stat counters; 100 on every Linux this runs on, asked once. */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The fields after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  return text.slice(text.lastIndexOf(")") + 2).split(" ");
}

/** User plus system CPU of a process, in ms (10 ms resolution); NaN once it has gone. */
export function cpuMs(pid: number): number {
  const fields = statFields(pid);
  // utime and stime are fields 14 and 15 of stat(5); index 0 here is field 3.
  if (fields === null) return Number.NaN;
  return (Number(fields[11]) + Number(fields[12])) * 1000 / TICKS_PER_SECOND;
}

/** The sum of cpuMs over several processes. */
export function totalCpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
}

/** Processes whose parent is `parent` and whose command name starts with `name`. */
export function childPids(parent: number, name: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const comm = text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
    const ppid = Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid === parent && comm.startsWith(name)) out.push(Number(entry));
  }
  return out;
}
