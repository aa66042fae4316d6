/**
 * The README's commands answer as the README says. Every fenced shell command that queries the
 * gateway (a curl of http://127.0.0.1:8787, or the CLI asking the gateway) carries a comment with
 * the code it expects (`# code ok`), the HTTP status (`# HTTP 401`) or, for the CLI's output for
 * people, its exit status (`# exit 0`). This test starts the gateways the README starts, as
 * `npm start` would: the plain one (port 8787 in the README) and the token demo's (port 8788, with
 * development keys and TRACEFETCH_REQUIRE_AUTH=on), and runs each command against them with bash,
 * as a reader would paste it.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { launch, type Launched } from "../src/runtime/launch.ts";
import { listen } from "../src/runtime/node-listen.ts";
import { nodePorts } from "../src/runtime/node-fetch.ts";
import { readSettings } from "../src/config/settings.ts";

const run = promisify(execFile);
const ROOT = new URL("../", import.meta.url);
const README = readFileSync(new URL("README.md", ROOT), "utf8");
const DEFAULT_URL = "http://127.0.0.1:8787";
const TOKEN_DEMO_URL = "http://127.0.0.1:8788";

type Expect = { code: string } | { http: number } | { exit: number };
type Command = { text: string; expect: Expect | null };

/** The fenced `sh` blocks' commands, continuation lines joined, with their expectation comment. */
export function readmeCommands(markdown: string): Command[] {
  const commands: Command[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let pending = "";
    for (const line of (block[1] ?? "").split("\n")) {
      pending += pending === "" ? line : `\n${line}`;
      if (line.endsWith("\\")) continue;
      if (pending.trim() !== "") commands.push(parse(pending));
      pending = "";
    }
  }
  return commands;
}

function parse(text: string): Command {
  const comment = /\s#\s*(.*)$/.exec(text.split("\n").at(-1) ?? "")?.[1] ?? "";
  const code = /\bcode (\w+)/.exec(comment)?.[1];
  const http = /\bHTTP (\d{3})\b/.exec(comment)?.[1];
  const exit = /\bexit (\d)\b/.exec(comment)?.[1];
  const expect: Expect | null = code !== undefined
    ? { code }
    : http !== undefined
    ? { http: Number(http) }
    : exit !== undefined
    ? { exit: Number(exit) }
    : null;
  return { text, expect };
}

/** Whether a command asks the running gateway something (and so must say what it expects). */
function queriesGateway(text: string): boolean {
  const command = text.replace(/\s#.*$/gm, "");
  if (command.includes(DEFAULT_URL) || command.includes(TOKEN_DEMO_URL)) return true;
  return /\btracefetch (search|status|doctor)\b/.test(command) && !/--manifest\b/.test(command);
}

/** The code of what a command printed: an envelope, or the last event of a stream. */
function codeOf(output: string): string | undefined {
  const lines = output.trim().split("\n").filter((l) => l.trim() !== "");
  for (const candidate of [output, ...lines.reverse()]) {
    const text = candidate.replace(/^data: /, "").trim();
    try {
      const value = JSON.parse(text) as { code?: unknown };
      if (typeof value.code === "string") return value.code;
    } catch {
      // not JSON: the next line may be
    }
  }
  return undefined;
}

async function devKeys(): Promise<Record<string, string>> {
  const { stdout } = await run("node", ["--import", "tsx", "scripts/dev-token.ts", "keygen"], {
    cwd: ROOT,
  });
  const env: Record<string, string> = {};
  for (const m of stdout.matchAll(/^export (\w+)=(?:'([^']*)'|(\S*))$/gm)) {
    env[m[1] as string] = m[2] ?? m[3] ?? "";
  }
  return env;
}

describe("the README's commands", { skip: "Deno" in globalThis }, () => {
  const commands = readmeCommands(README).filter((c) => queriesGateway(c.text));
  let gateway: Launched;
  let tokenDemo: Launched;
  let env: Record<string, string>;

  before(async () => {
    const keys = await devKeys();
    const local = { PORT: "0", HOST: "127.0.0.1" };
    gateway = await launch(readSettings(local), listen, nodePorts());
    tokenDemo = await launch(
      readSettings({ ...keys, ...local, TRACEFETCH_REQUIRE_AUTH: "on" }),
      listen,
      nodePorts(),
    );
    const { stdout } = await run(
      "node",
      ["--import", "tsx", "scripts/dev-token.ts", "mint", "--sub", "alice"],
      { cwd: ROOT, env: { ...process.env, ...keys } },
    );
    env = { ...process.env, ...keys, TOKEN: stdout.trim() } as Record<string, string>;
  });
  after(async () => {
    await gateway?.close();
    await tokenDemo?.close();
  });

  it("finds the commands that query the gateway", () => {
    assert.ok(commands.length >= 8, `only ${commands.length} commands found`);
  });

  it("every command that queries the gateway says what it expects", () => {
    const silent = commands.filter((c) => c.expect === null).map((c) => c.text);
    assert.deepEqual(silent, [], "add `# code NAME` or `# HTTP NNN` to each");
  });

  for (const command of commands) {
    it(`${command.text.replace(/\s+/g, " ").slice(0, 110)}`, async () => {
      const script = command.text.replaceAll(DEFAULT_URL, gateway.url)
        .replaceAll(TOKEN_DEMO_URL, tokenDemo.url)
        .replace(/\btracefetch (search|status|doctor)\b/g, `$& --gateway ${gateway.url}`)
        .replace(/\bnpx tracefetch\b/g, `node bin/tracefetch.js`);
      const withStatus = command.expect !== null && "http" in command.expect
        ? script.replace(/^curl /, "curl -s -o /dev/null -w '%{http_code}' ")
        : script.replace(/^curl /, "curl -s ");
      const { stdout, status } = await run("bash", ["-c", withStatus], { cwd: ROOT, env }).then(
        ({ stdout }) => ({ stdout, status: 0 }),
        (error: { stdout?: string; code?: number }) => ({
          stdout: error.stdout ?? "",
          status: error.code ?? -1,
        }),
      );
      const expect = command.expect;
      assert.ok(expect !== null);
      if ("http" in expect) assert.equal(Number(stdout.trim()), expect.http, stdout);
      else if ("exit" in expect) assert.equal(status, expect.exit, stdout.slice(0, 2_000));
      else assert.equal(codeOf(stdout), expect.code, stdout.slice(0, 2_000));
    });
  }
});
