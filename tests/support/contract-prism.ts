/**
 * Stoplight Prism in proxy mode, as a child process in front of a server on 127.0.0.1: every
 * request it forwards comes back with what breaks the OpenAPI document in an `sl-violations`
 * header, the request's side and the answer's. Prism is the validator; this file only starts it
 * and reads its findings.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const PRISM = fileURLToPath(new URL("../../node_modules/.bin/prism", import.meta.url));

/**
 * Prism reads and resolves the document, then listens: about 3 s on this machine, and over 30 s
 * with the load at 12 on its 2 cores. Past this, the test fails saying Prism did not start, rather
 * than hang.
 */
export const PRISM_START_MS = 90_000;

/** One finding of Prism's, as its header carries it. */
export type PrismViolation = {
  location: string[];
  severity: "Error" | "Warning" | "Info" | "Hint";
  code?: string | number;
  message: string;
};

export type Prism = { url: string; close: () => Promise<void> };

/** Prism proxying `upstream` under `document` (a file), listening on a port it picks. */
export function startPrism(document: string, upstream: string): Promise<Prism> {
  const child = spawn(
    PRISM,
    ["proxy", document, upstream, "--host", "127.0.0.1", "--port", "0", "--errors=false"],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  const close = () => stop(child);
  const said: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void close();
      reject(new Error(`Prism did not start in ${PRISM_START_MS} ms:\n${said.join("\n")}`));
    }, PRISM_START_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited (${code}) before listening:\n${said.join("\n")}`));
    });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on("line", (line) => {
        said.push(line);
        const listening = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (listening?.[1] === undefined) return;
        clearTimeout(timer);
        resolve({ url: listening[1], close });
      });
    }
  });
}

/** How long Prism has to end on SIGTERM before it is killed: it ends in well under a second. */
const PRISM_STOP_MS = 5_000;

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), PRISM_STOP_MS);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * The findings in an answer's `sl-violations` header. Past about 8 KiB Prism cuts the header and
 * prefixes "Too many violations!": then the findings that were cut are said to be missing.
 */
export function violationsOf(headers: Headers): PrismViolation[] {
  const header = headers.get("sl-violations");
  if (header === null) return [];
  const cut = header.startsWith("Too many violations! ");
  const text = cut ? header.slice("Too many violations! ".length) : header;
  if (!cut) return JSON.parse(text) as PrismViolation[];
  // Keep the whole findings before the cut, and say that more were cut.
  const whole = text.slice(0, text.lastIndexOf("},") + 1);
  const found = whole.length > 1 ? JSON.parse(`${whole}]`) as PrismViolation[] : [];
  return [...found, {
    location: ["response"],
    severity: "Error",
    message: "more findings than Prism's header holds",
  }];
}

/** Prism's findings, one line per place: an `anyOf` fails in every branch, each a finding. */
export function prismLines(found: Array<{ location: string[]; message: string }>): string[] {
  const byPlace = new Map<string, string[]>();
  for (const v of found) {
    const place = v.location.join(".");
    byPlace.set(place, [...byPlace.get(place) ?? [], v.message]);
  }
  return [...byPlace].map(([place, messages]) =>
    `prism ${place}: ${messages[0]}${
      messages.length > 1 ? ` (and ${messages.length - 1} more findings there)` : ""
    }`
  );
}
