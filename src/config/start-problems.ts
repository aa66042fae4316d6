/**
 * The one-line messages a start ends with when the fix is the operator's: a manifest file that is
 * not there, an address that cannot be listened on. One wording for `npm start`, `deno task dev`,
 * `tracefetch serve` and `tracefetch validate`, each naming what to change.
 */

/** A manifest path that names no file; `from` says where the path came from (TRACEFETCH_MANIFEST). */
export function manifestFileMissing(path: string, from: string): string {
  return `no manifest file at ${
    JSON.stringify(path)
  } (from ${from}; a relative path is read from the working directory)`;
}

/** A manifest path that names something that cannot be read as a file (a directory, no permission). */
export function manifestFileUnreadable(path: string, from: string, code: string): string {
  return `cannot read the manifest file at ${JSON.stringify(path)} (from ${from}): ${code}`;
}

/** The reason a path was not read, from Node's and Deno's errors alike, for the two messages above. */
export function fileErrorCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : null;
}

/**
 * Why the gateway could not listen on HOST and PORT, as one line naming the variable to change; null
 * for a failure that is not the operator's to fix (a bug, rethrown as it is).
 */
export function listenProblem(error: unknown, host: string, port: number): string | null {
  const code = fileErrorCode(error);
  const message = error instanceof Error ? error.message : "";
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (code === "EADDRINUSE") {
    return `${address} is already in use; set PORT= to another port (PORT=0 picks a free one)`;
  }
  if (code === "EADDRNOTAVAIL") {
    return `${host} is not an address of this machine; set HOST= to one (127.0.0.1, the default, for this machine only; 0.0.0.0 for every interface)`;
  }
  // Node says ENOTFOUND or EAI_AGAIN; Deno throws a plain Error with the resolver's words.
  if (
    code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME" ||
    /failed to lookup address/i.test(message)
  ) {
    return `HOST=${host} does not resolve to an address of this machine; set HOST= to an address or a name of it (127.0.0.1 by default)`;
  }
  if (code === "EACCES" || (error instanceof Error && error.name === "PermissionDenied")) {
    return `listening on ${address} needs a privilege this process lacks; set PORT= to a port above 1023`;
  }
  return null;
}
