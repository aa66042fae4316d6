/**
 * The Chromium the browser tests drive, with no system package: the build inside the npm package
 * `@sparticuz/chromium` (a devDependency), unpacked once into a folder of this project's own,
 * `node_modules/.cache/tracefetch-chromium/<version>/`, under a lock. Run it by itself
 * (`node --import tsx scripts/test-chromium.ts`) to unpack and print one line saying which browser
 * the tests will use; `npm test` does so before the suites start (scripts/run-tests.ts).
 *
 * Which browser:
 * - `TRACEFETCH_CHROMIUM` names a Chromium executable: that one, as it is (any platform).
 * - Otherwise, on Linux x64: the package's build. Its `executablePath()` would unpack into the
 *   shared temp folder, where another user could have planted a `chromium` first, and it unpacks
 *   the NSS libraries the browser needs (`bin/al2023.tar.br`) only on Amazon Linux; so this module
 *   unpacks all four archives itself (brotli by node:zlib, tar by tar-fs) and never imports the
 *   package, whose import has side effects on Amazon Linux.
 * - Anywhere else: no browser, and a reason naming the variable.
 *
 * Nothing here looks at a browser the system has (Debian's /usr/bin/chromium included) unless the
 * variable names it.
 */
import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import process from "node:process";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createBrotliDecompress } from "node:zlib";

/** The variable that names a Chromium executable to use instead of the package's build. */
export const CHROMIUM_VARIABLE = "TRACEFETCH_CHROMIUM";

/**
 * The package that carries the build, pinned in package.json at 147.0.0 (Chromium 147.0.7727.0):
 * the last release whose engines allow Node 20; 153.0.0 declares `^22.17.0 || >=24.0.0`.
 */
const PACKAGE = "@sparticuz/chromium";

/** The project's own cache folder: never the shared temp folder. */
export const CHROMIUM_CACHE = fileURLToPath(
  new URL("../node_modules/.cache/tracefetch-chromium/", import.meta.url),
);

/**
 * How long a process waits for another to finish unpacking (about 230 MB written, a few seconds
 * on an idle disk) before it takes a lock whose holder still lives as abandoned.
 */
const LOCK_WAIT_MS = 180_000;
const LOCK_POLL_MS = 200;

/**
 * Flags for this build under playwright-core: headless and unsandboxed (containers forbid its
 * namespaces), no GPU, no zygote. Not the package's own `args`: they include `--single-process`,
 * with which the page closes as soon as it opens.
 */
export const PACKAGED_CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--no-zygote"];

/** A browser to launch: its path, what its process's environment adds, and where it came from. */
export type TestChromium = {
  executablePath: string;
  /** Variables the browser's process needs on top of the test process's own. */
  env: Record<string, string>;
  /** Flags this build needs beyond the tests' own. */
  flags: readonly string[];
  /** One line for people: which browser, from where. */
  described: string;
};

export type ChromiumChoice = { ok: true; chromium: TestChromium } | { ok: false; reason: string };

/** The browser the tests use, unpacking the package's build first when it is not yet. */
export async function testChromium(
  env: Record<string, string | undefined> = process.env,
): Promise<ChromiumChoice> {
  const named = env[CHROMIUM_VARIABLE];
  if (named !== undefined && named !== "") {
    if (!existsSync(named)) {
      return {
        ok: false,
        reason: `${CHROMIUM_VARIABLE} names ${named}, which does not exist; ` +
          `name a Chromium executable, or unset it to use ${PACKAGE}'s build (Linux x64)`,
      };
    }
    return {
      ok: true,
      chromium: {
        executablePath: named,
        env: {},
        flags: [],
        described: `${named} (${CHROMIUM_VARIABLE})`,
      },
    };
  }
  if (process.platform !== "linux" || process.arch !== "x64") {
    return {
      ok: false,
      reason: `${PACKAGE} carries a Chromium for Linux x64 only, and this is ` +
        `${process.platform} ${process.arch}: set ${CHROMIUM_VARIABLE} to a Chromium executable`,
    };
  }
  let bin: string;
  let version: string;
  try {
    // The package exports no package.json: its root is two folders above its main module.
    const root = join(dirname(createRequire(import.meta.url).resolve(PACKAGE)), "..", "..");
    bin = join(root, "bin");
    version = (JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
      version: string;
    }).version;
  } catch {
    return {
      ok: false,
      reason:
        `${PACKAGE} is not installed (npm install brings it), and ${CHROMIUM_VARIABLE} is unset`,
    };
  }
  const folder = join(CHROMIUM_CACHE, version);
  try {
    await unpackOnce(bin, folder);
  } catch (error) {
    return {
      ok: false,
      reason: `could not unpack ${PACKAGE} ${version} into ${folder}: ${(error as Error).message}`,
    };
  }
  return { ok: true, chromium: packaged(folder, version) };
}

/** The unpacked build: its libraries first on the library path, its own fonts. */
function packaged(folder: string, version: string): TestChromium {
  const inherited = process.env.LD_LIBRARY_PATH;
  return {
    executablePath: join(folder, "chromium"),
    env: {
      LD_LIBRARY_PATH: [join(folder, "lib"), folder, ...(inherited ? [inherited] : [])].join(":"),
      FONTCONFIG_FILE: join(folder, "fonts.conf"),
    },
    flags: PACKAGED_CHROMIUM_FLAGS,
    described: `${PACKAGE} ${version}, unpacked in ${folder}`,
  };
}

/**
 * Unpacks the package's four archives from `bin` into `folder` unless it is there: into a staging
 * folder beside it, renamed into place when complete, under a lock, so a second process waits and
 * never reads half an unpacking. True when this call unpacked, false when it found the folder.
 */
export async function unpackOnce(bin: string, folder: string): Promise<boolean> {
  if (existsSync(join(folder, "chromium"))) return false;
  await mkdir(dirname(folder), { recursive: true, mode: 0o700 });
  const lock = `${folder}.lock`;
  await takeLock(lock);
  try {
    if (existsSync(join(folder, "chromium"))) return false;
    const staging = `${folder}.staging-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    await mkdir(join(staging, "lib"), { recursive: true, mode: 0o700 });
    const binary = join(staging, "chromium");
    await pipeline(
      createReadStream(join(bin, "chromium.br")),
      createBrotliDecompress(),
      createWriteStream(binary, { mode: 0o700 }),
    );
    await chmod(binary, 0o755);
    // al2023: lib/ with the NSS libraries; swiftshader: the software GL the browser loads from its
    // own folder; fonts: fonts.conf and fonts/, the configuration rewritten below.
    for (const archive of ["al2023.tar.br", "swiftshader.tar.br", "fonts.tar.br"]) {
      await pipeline(
        createReadStream(join(bin, archive)),
        createBrotliDecompress(),
        tarExtract(staging),
      );
    }
    // The package's fonts.conf names folders under the shared temp folder: name ours instead.
    await writeFile(
      join(staging, "fonts.conf"),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        `  <dir>${join(folder, "fonts")}</dir>\n  <cachedir>${
          join(folder, "fonts-cache")
        }</cachedir>\n` +
        `</fontconfig>\n`,
    );
    await rm(folder, { recursive: true, force: true });
    await rename(staging, folder);
    return true;
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * tar-fs's extractor (it ships no types). `chown: false`: run as root, it would otherwise give the
 * files the owners recorded in the archive, users of the machine that packed it.
 */
function tarExtract(dir: string): NodeJS.WritableStream {
  const { extract } = createRequire(import.meta.url)("tar-fs") as {
    extract: (dir: string, options: { chown: boolean }) => NodeJS.WritableStream;
  };
  return extract(dir, { chown: false });
}

/**
 * A lock folder (mkdir is atomic) holding its owner's pid. A lock whose owner is gone, or that
 * outlived LOCK_WAIT_MS, is taken over.
 */
async function takeLock(lock: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(join(lock, "pid"), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (await abandoned(lock) || Date.now() - started > LOCK_WAIT_MS) {
      await rm(lock, { recursive: true, force: true });
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

async function abandoned(lock: string): Promise<boolean> {
  const pid = Number(await readFile(join(lock, "pid"), "utf8").catch(() => ""));
  if (!Number.isInteger(pid) || pid <= 0) {
    // Taken a moment ago and its pid not yet written, or left empty by a crash: old means the latter.
    const made = await stat(lock).then((s) => s.mtimeMs, () => 0);
    return Date.now() - made > 10_000;
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** The browser's own version line (`Chromium 147.0.7727.0`), or null when it does not start. */
export function chromiumVersion(chromium: TestChromium): string | null {
  const run = spawnSync(chromium.executablePath, ["--version"], {
    env: { ...process.env, ...chromium.env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return run.status === 0 ? run.stdout.trim() : null;
}

async function main(): Promise<void> {
  const choice = await testChromium();
  if (!choice.ok) {
    console.error(`browser: none: ${choice.reason}`);
    process.exit(1);
  }
  const version = chromiumVersion(choice.chromium);
  if (version === null) {
    console.error(`browser: ${choice.chromium.described} does not start (--version failed)`);
    process.exit(1);
  }
  console.log(`browser: ${version}, ${choice.chromium.described}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
