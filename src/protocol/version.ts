/**
 * The gateway's version, taken from package.json when the code is loaded or bundled, so
 * `/v1/status` says what was released.
 */
import pkg from "../../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
