/** jose-module.ts, loaded once, with the first token the gateway verifies or signs. */
let jose: Promise<typeof import("./jose-module.ts")> | null = null;

export type Jose = typeof import("./jose-module.ts");

export const loadJose = (): Promise<Jose> => (jose ??= import("./jose-module.ts"));
