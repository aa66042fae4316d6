/**
 * The browser the browser tests drive comes from npm, not from the system
 * (scripts/test-chromium.ts): @sparticuz/chromium's build, unpacked once under a lock into
 * node_modules/.cache with its own NSS libraries first on the library path, or the Chromium
 * TRACEFETCH_CHROMIUM names. The unpacking runs here over small archives of the package's layout.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createWriteStream } from "node:fs";
import { brotliCompressSync, createBrotliCompress } from "node:zlib";
import { fileURLToPath } from "node:url";
import { CHROMIUM_CACHE, PACKAGED_CHROMIUM_FLAGS, testChromium } from "../scripts/test-chromium.ts";
import { launchChromium } from "./support/browser.ts";

const isDeno = "Deno" in globalThis;
const packagedHere = process.platform === "linux" && process.arch === "x64";
const root = fileURLToPath(new URL("../", import.meta.url));

/** tar-fs's packer (it ships no types), for archives of the package's layout. */
const { pack } = createRequire(import.meta.url)("tar-fs") as {
  pack: (dir: string) => NodeJS.ReadableStream;
};

/** A folder tarred and brotli-compressed, as the package ships its archives. */
async function tarBr(dir: string, out: string): Promise<void> {
  await pipeline(pack(dir), createBrotliCompress(), createWriteStream(out));
}

/** Unpacks `bin` into `folder` in a process of its own; what unpackOnce answered. */
function unpackInChild(bin: string, folder: string): Promise<string> {
  const code =
    `import { unpackOnce } from ${JSON.stringify(join(root, "scripts/test-chromium.ts"))};\n` +
    `console.log(await unpackOnce(${JSON.stringify(bin)}, ${JSON.stringify(folder)}));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on(
      "close",
      (status) => status === 0 ? resolve(out.trim()) : reject(new Error(`exit ${status}`)),
    );
  });
}

describe("the tests' Chromium, unpacked from the npm package", {
  skip: isDeno ? "Node only" : false,
}, () => {
  let dir: string;
  let bin: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tracefetch-chromium-test-"));
    bin = join(dir, "bin");
    await mkdir(bin);
    await writeFile(join(bin, "chromium.br"), brotliCompressSync("#!/bin/sh\necho Chromium 0\n"));
    for (
      const [name, files] of Object.entries({
        al2023: { "lib/libnss3.so": "nss" },
        swiftshader: { "libEGL.so": "egl" },
        fonts: { "fonts.conf": "<dir>/tmp/fonts</dir>", "fonts/Open_Sans/OpenSans.ttf": "ttf" },
      })
    ) {
      const src = join(dir, `src-${name}`);
      for (const [path, text] of Object.entries(files)) {
        await mkdir(join(src, path, ".."), { recursive: true });
        await writeFile(join(src, path), text);
      }
      await tarBr(src, join(bin, `${name}.tar.br`));
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("two processes unpacking at once: one unpacks, both find the same whole folder, nothing left behind", async () => {
    const folder = join(dir, "cache", "1.0.0");
    const answers = await Promise.all([unpackInChild(bin, folder), unpackInChild(bin, folder)]);
    assert.deepEqual(answers.sort(), ["false", "true"]);
    assert.deepEqual((await readdir(join(dir, "cache"))).sort(), ["1.0.0"], "no lock, no staging");
    assert.equal(await readFile(join(folder, "lib", "libnss3.so"), "utf8"), "nss");
    assert.equal(await readFile(join(folder, "libEGL.so"), "utf8"), "egl");
    assert.ok(existsSync(join(folder, "fonts", "Open_Sans", "OpenSans.ttf")));
    // The package's fonts.conf names the shared temp folder; the unpacked one names its own.
    const fonts = await readFile(join(folder, "fonts.conf"), "utf8");
    assert.ok(!fonts.includes("<dir>/tmp/fonts</dir>"), fonts);
    assert.ok(fonts.includes(`<dir>${join(folder, "fonts")}</dir>`), fonts);
    assert.equal(await unpackInChild(bin, folder), "false", "a third finds it done");
  });

  it("a lock whose process is gone is taken over", async () => {
    const folder = join(dir, "cache", "2.0.0");
    const gone = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => gone.on("close", resolve));
    await mkdir(`${folder}.lock`, { recursive: true });
    await writeFile(join(`${folder}.lock`, "pid"), String(gone.pid));
    assert.equal(await unpackInChild(bin, folder), "true");
    assert.ok(!existsSync(`${folder}.lock`));
  });

  it("TRACEFETCH_CHROMIUM names the browser; one that does not exist is refused naming the variable", async () => {
    const named = await testChromium({ TRACEFETCH_CHROMIUM: process.execPath });
    assert.ok(named.ok);
    assert.equal(named.chromium.executablePath, process.execPath);
    assert.deepEqual(named.chromium.env, {});
    const nowhere = await testChromium({ TRACEFETCH_CHROMIUM: join(dir, "no-chromium") });
    assert.equal(nowhere.ok, false);
    assert.match(nowhere.ok ? "" : nowhere.reason, /^TRACEFETCH_CHROMIUM names .*no-chromium/);
  });

  it(
    "unset, it is the package's build in node_modules/.cache, its own libraries first, and it runs",
    { skip: packagedHere ? false : "the package carries Linux x64 only", timeout: 120_000 },
    async () => {
      const choice = await testChromium({});
      assert.ok(choice.ok, choice.ok ? "" : choice.reason);
      const { executablePath, env, flags } = choice.chromium;
      assert.ok(executablePath.startsWith(CHROMIUM_CACHE), executablePath);
      assert.ok(env.LD_LIBRARY_PATH?.startsWith(join(executablePath, "..", "lib")));
      assert.deepEqual(flags, PACKAGED_CHROMIUM_FLAGS);
      assert.ok(!flags.includes("--single-process"));
      const browser = await launchChromium({});
      try {
        // The package's version, not a system browser's.
        const version = browser.version();
        const pinned = JSON.parse(await readFile(join(root, "package.json"), "utf8"))
          .devDependencies["@sparticuz/chromium"] as string;
        assert.equal(version.split(".")[0], pinned.split(".")[0], version);
        const page = await browser.newPage();
        await page.setContent("<p>hello</p>");
        assert.equal(await page.textContent("p"), "hello");
        await page.close();
      } finally {
        await browser.close();
      }
    },
  );
});
