/**
 * The Lua scripts of the Redis store (redis-state.ts), and how their answers read: every update
 * that reads before it writes, run atomically by Redis at the store's clock (`TIME`, in whole
 * milliseconds), so instances whose clocks disagree still agree.
 *
 * Invariants:
 * - tracefetchStepBreaker is breakerStep (src/core/breaker.ts) line for line: the same branches,
 *   the same arithmetic on doubles, `wall` equal to `now`. tests/state-redis.test.ts holds it so.
 * - Numbers are written with 17 significant digits, never by cjson.encode (14 digits): what a
 *   script stores or answers reads back as the very double it computed, so a probe's `probeUntil`
 *   matches the claim it came from.
 * - Every key a script writes carries a TTL (PX or PEXPIRE), set in the same call.
 * - Every script is called with the number of keys first (ioredis's defineCommand without
 *   numberOfKeys), and touches only the keys it is given, all of one hash tag (redis-state.ts):
 *   no key name is built inside a script, so each runs on a Redis Cluster as on one server.
 */
import type { Breaker } from "../core/breaker.ts";
import {
  MAX_SUSPENSION_MS,
  SUSPEND_AFTER_FAILURES,
  SUSPENSION_BASE_MS,
} from "../protocol/limits.ts";
import { STORED_BREAKER_IDLE_MS } from "../protocol/state-limits.ts";
import { StoreFailure } from "./state-store.ts";
import { LOG_SEARCH_SCRIPT } from "./redis-log-script.ts";

/** The store's time in milliseconds, and numbers written so that they read back exactly. */
const PRELUDE = `
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function num(x)
  if x == false then return 'null' end
  return string.format('%.17g', x)
end
`;

/** The scripts, by the command name ioredis defines for each. */
export const SCRIPTS = {
  /**
   * KEYS: breakers of one hash tag (one, from redis-state.ts). Answers the store's time, then each
   * breaker's JSON or nil, in KEYS' order.
   */
  tracefetchBreakers: `${PRELUDE}
local out = { num(clock()) }
for i, key in ipairs(KEYS) do out[i + 1] = redis.call('GET', key) end
return out
`,
  /**
   * KEYS[1]: the breaker. ARGV: the event's JSON, claimMs, then BREAKER_LIMITS. Answers
   * {"now":…,"effect":…,"breaker":…} as JSON. Absent times are `false` here, null in JSON.
   */
  tracefetchStepBreaker: `${PRELUDE}
local now = clock()
local event = cjson.decode(ARGV[1])
local claimMs, AFTER, BASE = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local MAX, IDLE = tonumber(ARGV[5]), tonumber(ARGV[6])
local NONE = '{"kind":"none"}'

local function given(v)
  if v == nil or v == cjson.null then return false end
  return v
end
local function load(raw)
  local j = cjson.decode(raw)
  return { failures = j.failures, backoffs = j.backoffs, untilAt = given(j['until']),
    untilWall = j.untilWall, epoch = j.epoch, probeUntil = given(j.probeUntil),
    probeWall = j.probeWall }
end
local function save(b)
  if not b then return 'null' end
  return '{"failures":' .. num(b.failures) .. ',"backoffs":' .. num(b.backoffs) ..
    ',"until":' .. num(b.untilAt) .. ',"untilWall":' .. num(b.untilWall) ..
    ',"epoch":' .. num(b.epoch) .. ',"probeUntil":' .. num(b.probeUntil) ..
    ',"probeWall":' .. num(b.probeWall) .. '}'
end
-- { ...b, ...changes }, as breakerStep spreads a breaker.
local function with(b, changes)
  local c = {}
  for k, v in pairs(b) do c[k] = v end
  for k, v in pairs(changes) do c[k] = v end
  return c
end
local CLOSED = { failures = 0, backoffs = 0, untilAt = false, untilWall = 0, epoch = 0,
  probeUntil = false, probeWall = 0 }
local function probing(b) return b.probeUntil ~= false and now < b.probeUntil end
local function reset(b)
  if not probing(b) then return false end
  local cleared = { failures = 0, backoffs = 0, untilAt = false, untilWall = 0 }
  return with(with(b, cleared), { epoch = b.epoch + 1 })
end
local function suspend(b, ms)
  return with(b, { untilAt = now + ms, untilWall = now + ms, epoch = b.epoch + 1 })
end
local function claim(b, confirm)
  local probeUntil = now + claimMs
  return with(b, { probeUntil = probeUntil, probeWall = now + claimMs }),
    '{"kind":"claimed","confirm":' .. tostring(confirm) .. ',"epoch":' .. num(b.epoch) ..
    ',"probeUntil":' .. num(probeUntil) .. ',"failures":' .. num(b.failures) .. '}'
end
local function backoffMs(n) return math.min(MAX, BASE * 2 ^ math.max(0, n - 1)) end
local function forgettable(b)
  return b.untilAt == false and b.failures == 0 and b.probeUntil == false
end

local function step(b, e)
  if e.kind == 'attempt' then
    local v = e.verdict
    if not b then
      if v.kind ~= 'failure' then return false, NONE end
      b = CLOSED
    end
    if b.untilAt ~= false then return b, NONE end
    if v.kind == 'neutral' then return b, NONE end
    if v.kind == 'success' then return reset(b), NONE end
    local failed = with(b, { failures = b.failures + 1 })
    local wait = given(v.waitMs)
    if wait ~= false then
      return suspend(failed, wait), '{"kind":"waiting","ms":' .. num(wait) .. '}'
    end
    if failed.failures >= AFTER and not probing(failed) then return claim(failed, true) end
    return failed, NONE
  elseif e.kind == 'resume' then
    if not b or b.untilAt == false or now < b.untilAt or probing(b) then return b, NONE end
    return claim(b, false)
  elseif e.kind == 'probed' then
    if not b or b.probeUntil ~= e.probeUntil then return b, NONE end
    local settled = with(b, { probeUntil = false })
    local current = b.epoch == e.epoch and (b.untilAt == false or now >= b.untilAt)
    if not current then
      if forgettable(settled) then return false, NONE end
      return settled, NONE
    end
    local kind = e.verdict.kind
    if kind == 'success' then return false, NONE end
    if kind == 'neutral' then return settled, NONE end
    if kind == 'failure' then
      local backoffs = settled.backoffs + 1
      local ms = math.max(backoffMs(backoffs), given(e.verdict.waitMs) or 0)
      local failed = with(settled, { failures = settled.failures + 1, backoffs = backoffs })
      return suspend(failed, ms), NONE
    end
    return error('unhandled verdict ' .. tostring(kind))
  end
  return error('unhandled breaker event ' .. tostring(e.kind))
end

local raw = redis.call('GET', KEYS[1])
local before = raw and load(raw) or false
local after, effect = step(before, event)
if after then
  -- Kept past every moment it names, then for IDLE: a TTL for garbage only.
  local last = math.max(now, after.untilAt or now, after.probeUntil or now)
  redis.call('SET', KEYS[1], save(after), 'PX', string.format('%d', math.ceil(last - now + IDLE)))
elseif before then
  redis.call('DEL', KEYS[1])
end
return '{"now":' .. num(now) .. ',"effect":' .. effect .. ',"breaker":' .. save(after) .. '}'
`,
  /** KEYS[1]: the result. ARGV[1]: maxAgeMs. Answers the stored JSON while fresh enough, or nil. */
  tracefetchProbeResult: `${PRELUDE}
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local storedAt = tonumber(string.match(raw, '^{"storedAt":([^,]+),'))
if storedAt == nil or clock() - storedAt > tonumber(ARGV[1]) then return false end
return raw
`,
  /**
   * KEYS: the result, its lease. ARGV: the value's JSON, ttlMs. The value is spliced in as text, so
   * cjson never re-encodes it (it would turn [] into {} and round numbers).
   */
  tracefetchStoreProbeResult: `${PRELUDE}
local ttl = math.ceil(tonumber(ARGV[2]))
if ttl > 0 then
  local record = '{"storedAt":' .. num(clock()) .. ',"value":' .. ARGV[1] .. '}'
  redis.call('SET', KEYS[1], record, 'PX', string.format('%d', ttl))
else
  redis.call('DEL', KEYS[1])
end
redis.call('DEL', KEYS[2])
return 1
`,
  /**
   * KEYS: lease, waited, this id's events, this id's ended. ARGV: the id, leaseMs. Answers {1, id}
   * when it now leads, {0, the leader's id} when it follows (`waited` then names the leader).
   */
  tracefetchClaimFlight: `
local holder = redis.call('GET', KEYS[1])
if holder then
  redis.call('SET', KEYS[2], holder, 'PX', math.max(1, redis.call('PTTL', KEYS[1])))
  return { 0, holder }
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return { 1, ARGV[1] }
`,
  /** KEYS: lease, waited, events, ended. ARGV: id, leaseMs. Answers {held, waited} as 0 or 1. */
  tracefetchRenewFlight: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return { 0, 0 } end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local waited = 0
if redis.call('GET', KEYS[2]) == ARGV[1] then
  waited = 1
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return { 1, waited }
`,
  /**
   * KEYS: lease, waited, events, ended. ARGV: id, "1" when last, keepMs, then the events' JSON.
   * Appends to a flight whose lease is held (or whose follower, registered for the lease's time,
   * waits) and that has not ended, as the shard's steps do (shard-steps.ts); the last one marks it
   * ended, lets go of the lease, and keeps both for keepMs.
   */
  tracefetchPublishFlight: `
if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
local holds = redis.call('GET', KEYS[1]) == ARGV[1]
local waited = redis.call('GET', KEYS[2]) == ARGV[1]
if not holds and not waited then return 0 end
for i = 4, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
local keep = tonumber(ARGV[3])
if ARGV[2] == '1' then
  redis.call('SET', KEYS[4], '1', 'PX', keep)
  redis.call('PEXPIRE', KEYS[3], keep)
  if waited then redis.call('DEL', KEYS[2]) end
  if holds then redis.call('DEL', KEYS[1]) end
else
  local lease = 0
  if holds then lease = redis.call('PTTL', KEYS[1]) end
  redis.call('PEXPIRE', KEYS[3], math.max(keep, lease))
end
return 1
`,
  /**
   * KEYS: lease, waited, events, ended. ARGV: id, leaseMs. Answers 1 when a follower waits (the
   * lease is kept leaseMs more), else 0 after dropping the flight and all it kept.
   */
  tracefetchEndFlight: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
  return 1
end
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
return 0
`,
  /**
   * KEYS: lease, waited, events, ended. ARGV[1]: the id. While this id holds the lease, deletes the
   * flight and all it kept, as the shard's steps do: its followers read `orphaned` and nothing else.
   */
  tracefetchDropFlight: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 1 end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
return 1
`,
  /**
   * KEYS: lease, waited, events, ended. ARGV: id, from. Answers the state ("ended", "running" or
   * "orphaned"), then the events' JSON from index `from`.
   */
  tracefetchReadFlight: `
local state = 'orphaned'
if redis.call('EXISTS', KEYS[4]) == 1 then state = 'ended'
elseif redis.call('GET', KEYS[1]) == ARGV[1] then state = 'running' end
if state == 'orphaned' then return { state } end
local out = redis.call('LRANGE', KEYS[3], ARGV[2], -1)
table.insert(out, 1, state)
return out
`,
  tracefetchLogSearch: LOG_SEARCH_SCRIPT,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

/** What tracefetchStepBreaker takes after the event and claimMs, in its order. */
export const BREAKER_LIMITS = [
  SUSPEND_AFTER_FAILURES,
  SUSPENSION_BASE_MS,
  MAX_SUSPENSION_MS,
  STORED_BREAKER_IDLE_MS,
];

export const unreadable = () =>
  new StoreFailure("the store answered with something this gateway cannot read");

/** A script's JSON answer, read. */
export function parse(raw: unknown): unknown {
  if (typeof raw !== "string") throw unreadable();
  try {
    return JSON.parse(raw);
  } catch {
    throw unreadable();
  }
}

/** A stored breaker read back: its fields, each of its type, or the store's answer is unreadable. */
export function asBreaker(value: unknown): Breaker | null {
  if (value === null) return null;
  const b = (typeof value === "object" ? value : {}) as Record<keyof Breaker, unknown>;
  const numbers = [b.failures, b.backoffs, b.untilWall, b.epoch, b.probeWall];
  const times = [b.until, b.probeUntil];
  if (![...numbers, ...times.filter((v) => v !== null)].every((v) => typeof v === "number")) {
    throw unreadable();
  }
  const { failures, backoffs, until, untilWall, epoch, probeUntil, probeWall } = b as Breaker;
  return { failures, backoffs, until, untilWall, epoch, probeUntil, probeWall };
}
