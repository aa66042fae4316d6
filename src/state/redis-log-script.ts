/**
 * The Lua script of a caller's search log in Redis (redis-state.ts): searchLogStep
 * (src/core/search-log.ts) line for line, run atomically at the store's clock, so the instances of
 * a deployment count one log per caller and no two admit the same last place.
 *
 * KEYS: the times, a sorted set whose scores are the times of the searches admitted (whole
 * milliseconds of Redis's `TIME`); the costs, a hash from a bucket's start to the micros admitted
 * in it. ARGV: the searches' limit (0: not asked), their window, a member unique to this search
 * (two searches in one millisecond are two entries); the cost's limit (0: not asked), its window,
 * this search's micros, the bucket's length. Answers {1, 0, ""} when the search was logged, else
 * {0, the wait in ms, the limit met}. Each key expires when everything in it has left its window.
 */
export const LOG_SEARCH_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slimit, swindow = tonumber(ARGV[1]), tonumber(ARGV[2])
local climit, cwindow, micros, bucket = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]),
  tonumber(ARGV[7])
local wait, limit = 0, ''
if slimit > 0 then
  -- A time counts while now < time + window.
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - swindow))
  local count = redis.call('ZCARD', KEYS[1])
  if count >= slimit then
    -- Admitted once all but limit - 1 of the logged times left the window.
    local leaving = redis.call('ZRANGE', KEYS[1], count - slimit, count - slimit, 'WITHSCORES')
    wait, limit = tonumber(leaving[2]) + swindow - now, 'searches_per_minute'
  end
end
if climit > 0 then
  local fields = redis.call('HGETALL', KEYS[2])
  local kept, spent = {}, 0
  for i = 1, #fields, 2 do
    local start, m = tonumber(fields[i]), tonumber(fields[i + 1])
    if now < start + bucket + cwindow then
      table.insert(kept, { start, m })
      spent = spent + m
    else
      redis.call('HDEL', KEYS[2], fields[i])
    end
  end
  table.sort(kept, function(a, b) return a[1] < b[1] end)
  if micros > 0 and spent + micros > climit then
    -- A search that costs more than the whole limit never fits: a window later, it is told.
    local w, freed = cwindow, 0
    if micros <= climit then
      for _, b in ipairs(kept) do
        freed = freed + b[2]
        if spent - freed + micros <= climit then
          w = b[1] + bucket + cwindow - now
          break
        end
      end
    end
    if limit == '' or w > wait then wait, limit = w, 'cost_micros_per_day' end
  end
end
if limit ~= '' then return { 0, wait, limit } end
if slimit > 0 then
  redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], string.format('%d', swindow))
end
if climit > 0 and micros > 0 then
  redis.call('HINCRBY', KEYS[2], string.format('%d', now - now % bucket), string.format('%d', micros))
  redis.call('PEXPIRE', KEYS[2], string.format('%d', bucket + cwindow))
end
return { 1, 0, '' }
`;
