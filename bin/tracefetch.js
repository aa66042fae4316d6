#!/usr/bin/env node
// The `tracefetch` bin. Node 20 cannot run .ts files by itself, so this registers tsx (a runtime
// dependency) and hands over to src/cli/main.ts. Under Deno: deno run -A src/cli/main.ts.
import { register } from "tsx/esm/api";

register();
const { run } = await import("../src/cli/main.ts");
await run();
