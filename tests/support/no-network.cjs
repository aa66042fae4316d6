/**
 * Preloaded (NODE_OPTIONS=--require) into the vendor MCP servers the tests run: a machine with no
 * network, made certain. Every socket or DNS lookup for a host other than loopback fails at once,
 * as it would offline, so nothing a vendor's server tries (its API, its analytics) leaves 127.0.0.1.
 */
"use strict";
const net = require("node:net");
const dns = require("node:dns");

const LOOPBACK = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);
const isLoopback = (host) => host === undefined || host === null || LOOPBACK.has(String(host));
const offline = (host) =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${host} (no network)`), {
    code: "ENOTFOUND",
    hostname: host,
  });

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = typeof first === "object" && first !== null ? first : { host: args[1] };
  if (options.path === undefined && !isLoopback(options.host)) {
    process.nextTick(() => this.destroy(offline(options.host)));
    return this;
  }
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  const done = typeof options === "function" ? options : callback;
  if (!isLoopback(host)) return process.nextTick(() => done(offline(host)));
  return lookup.call(this, host, options, callback);
};
const lookupPromise = dns.promises.lookup;
dns.promises.lookup = (host, options) =>
  isLoopback(host) ? lookupPromise(host, options) : Promise.reject(offline(host));
