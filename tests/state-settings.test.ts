/**
 * The shared-state variables (docs/deploy.md, "Shared state"): a Redis URL, its prefix and timeout,
 * and the secret a shared store needs; every refusal one line that never shows the URL.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readSettings } from "../src/config/settings.ts";
import { ConfigError } from "../src/protocol/config-error.ts";
import { parseRedisUrl } from "../src/state/redis-url.ts";
import {
  DEFAULT_STATE_PREFIX,
  DEFAULT_STATE_TIMEOUT_MS,
  MIN_STATE_SECRET_BYTES,
} from "../src/protocol/state-limits.ts";

const stateOf = (env: Record<string, string>) => readSettings(env).env.state;
const SECRET = "x".repeat(MIN_STATE_SECRET_BYTES);

function refusal(env: Record<string, string>): string {
  try {
    stateOf(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.ok(!error.message.includes("\n"), "one line");
    return error.message;
  }
  assert.fail("the settings were accepted");
}

describe("a Redis URL, read (src/state/redis-url.ts)", () => {
  it("one server: the URL as it is and its database; a cluster: its seeds, TLS and credentials", () => {
    assert.deepEqual(parseRedisUrl("redis://127.0.0.1:6379/15"), {
      kind: "single",
      url: "redis://127.0.0.1:6379/15",
      db: 15,
    });
    assert.deepEqual(parseRedisUrl("rediss://h"), { kind: "single", url: "rediss://h", db: 0 });
    assert.deepEqual(
      parseRedisUrl("rediss+cluster://edge:p%40ss@a.example,10.0.0.2:7001,[::1]:7002"),
      {
        kind: "cluster",
        nodes: [
          { host: "a.example", port: 6379 },
          { host: "10.0.0.2", port: 7001 },
          { host: "::1", port: 7002 },
        ],
        tls: true,
        username: "edge",
        password: "p@ss",
      },
    );
    assert.deepEqual(parseRedisUrl("redis+cluster://:pw@h:1/0"), {
      kind: "cluster",
      nodes: [{ host: "h", port: 1 }],
      tls: false,
      username: undefined,
      password: "pw",
    });
  });

  it("a cluster has database 0 only; a port out of range or an empty seed is no URL", () => {
    for (
      const url of ["redis+cluster://h:1/1", "redis+cluster://h:70000", "redis+cluster://h:1,"]
    ) {
      assert.equal(parseRedisUrl(url), null, url);
    }
  });
});

describe("TRACEFETCH_STATE_*", () => {
  it("unset: no shared store, the default prefix and timeout", () => {
    assert.deepEqual(stateOf({}), {
      url: null,
      prefix: DEFAULT_STATE_PREFIX,
      timeoutMs: DEFAULT_STATE_TIMEOUT_MS,
      secret: null,
    });
  });

  it("a redis://, rediss:// or cluster URL with a secret of 32 bytes or more is taken as it is", () => {
    for (
      const url of [
        "redis://127.0.0.1:6379/0",
        "rediss://:pw@redis.example:6380",
        "redis+cluster://10.0.0.1:7000,10.0.0.2:7001",
        "rediss+cluster://edge:p%40ss@redis.example:6380",
      ]
    ) {
      const state = stateOf({
        TRACEFETCH_STATE_URL: url,
        TRACEFETCH_STATE_SECRET: SECRET,
        TRACEFETCH_STATE_PREFIX: "edge-a:",
        TRACEFETCH_STATE_TIMEOUT_MS: "100",
      });
      assert.deepEqual(state, { url, prefix: "edge-a:", timeoutMs: 100, secret: SECRET });
    }
  });

  it("a URL that is not Redis is refused without being echoed: it may hold a password", () => {
    for (
      const url of [
        "http://user:hunter2@cache.example",
        "hunter2",
        "redis://",
        "redis://:hunter2@a:1,b:2",
        "redis://:hunter2@a:1/db",
        "redis+cluster://:hunter2@a:1/3",
        "redis+cluster://:hunter2@a:1,,b:2",
        "rediss+cluster://:hunter2@",
      ]
    ) {
      const message = refusal({ TRACEFETCH_STATE_URL: url, TRACEFETCH_STATE_SECRET: SECRET });
      assert.match(
        message,
        /^TRACEFETCH_STATE_URL must be a redis:\/\/, rediss:\/\/, redis\+cluster:\/\/ or rediss\+cluster:\/\/ URL/,
      );
      assert.ok(!message.includes("hunter2"), message);
    }
  });

  it("a shared store without TRACEFETCH_STATE_SECRET, or with a short one, does not start", () => {
    const url = "redis://127.0.0.1:6379";
    assert.match(
      refusal({ TRACEFETCH_STATE_URL: url }),
      /^TRACEFETCH_STATE_URL shares state between instances and needs TRACEFETCH_STATE_SECRET \(at least 32 bytes\)/,
    );
    assert.equal(
      refusal({ TRACEFETCH_STATE_URL: url, TRACEFETCH_STATE_SECRET: "short" }),
      "TRACEFETCH_STATE_SECRET must be at least 32 bytes (it has 5)",
    );
  });

  it("the timeout is a whole number of milliseconds from 1 to 5000", () => {
    for (const value of ["0", "5001", "1.5", "soon"]) {
      assert.match(
        refusal({ TRACEFETCH_STATE_TIMEOUT_MS: value }),
        /^TRACEFETCH_STATE_TIMEOUT_MS must be an integer from 1 to 5000/,
      );
    }
  });
});
