-- The decide script as released before the hourly summary (commit b1c587d), frozen here so a
-- test can run it beside the current one, as instances of both versions do during a rolling
-- deployment. Not used by the service.
-- One rate-limit decision for an API key (docs/RATE_LIMITING.md), atomic in Redis.
-- Runs after month-of.lua (month_of).
-- KEYS[1] the hourly hash (bucket -> count); KEYS[2..4] month counters for the caller's guess
-- of the previous, current and next month (declared keys, as a cluster requires; the script
-- picks the one matching its time).
-- ARGV: hourly limit, monthly limit, now in ms or '' for Redis TIME, 'consume' or 'peek',
-- the hourly hash's time to live in ms.
-- Replies: {'seed', month} when the month counter is missing (the caller seeds it from
-- PostgreSQL and runs again, so nothing is admitted on a lost count); {'month', month} when
-- no declared key matches; {'ok', month, nowMs, allowed, monthUsedBefore, bucket, count, ...}
-- with the counted buckets as they were before this request.
local now_ms
if ARGV[3] ~= '' then
  now_ms = tonumber(ARGV[3])
else
  local time = redis.call('TIME')
  now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local month = month_of(now_ms)
local month_key
for i = 2, #KEYS do
  if string.sub(KEYS[i], -7) == month then month_key = KEYS[i] end
end
if not month_key then return {'month', month} end
local used = redis.call('GET', month_key)
if not used then return {'seed', month} end
used = tonumber(used)

local fields = redis.call('HGETALL', KEYS[1])
-- The newest bucket wins over the clock if the clock stepped back (see currentBucket).
local current = math.floor(now_ms / 60000)
for i = 1, #fields, 2 do
  local bucket = tonumber(fields[i])
  if bucket > current and tonumber(fields[i + 1]) > 0 then current = bucket end
end
local oldest = current - 60
local counted = 0
local snapshot = {}
local stale = {}
for i = 1, #fields, 2 do
  local bucket = tonumber(fields[i])
  local count = tonumber(fields[i + 1])
  if bucket < oldest then
    stale[#stale + 1] = fields[i]
  else
    counted = counted + count
    snapshot[#snapshot + 1] = bucket
    snapshot[#snapshot + 1] = count
  end
end

local allowed = 0
if used < tonumber(ARGV[2]) and counted < tonumber(ARGV[1]) then allowed = 1 end
if ARGV[4] == 'consume' then
  if #stale > 0 then redis.call('HDEL', KEYS[1], unpack(stale)) end
  if allowed == 1 then
    redis.call('HINCRBY', KEYS[1], string.format('%d', current), 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
    redis.call('INCR', month_key)
  end
end
return {'ok', month, now_ms, allowed, used, unpack(snapshot)}
