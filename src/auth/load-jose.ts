import { lazy } from "../core/lazy-module.ts";

export type Jose = typeof import("./jose-module.ts");

/** jose-module.ts, loaded once, with the first token the gateway verifies or signs. */
export const loadJose: () => Promise<Jose> = lazy(() => import("./jose-module.ts"));
