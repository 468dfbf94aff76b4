-- One rate-limit decision for an API key (docs/RATE_LIMITING.md), atomic in Redis.
-- Runs after month-of.lua (month_of).
-- KEYS[1] the hourly hash (bucket -> count); KEYS[2..4] month counters for the caller's guess
-- of the previous, current and next month (declared keys, as a cluster requires; the script
-- picks the one matching its time).
-- ARGV: hourly limit, monthly limit, now in ms or '' for Redis TIME, 'consume' or 'peek',
-- the hourly hash's time to live in ms.
-- Replies: {'seed', month} when the month counter is missing (the caller seeds it from
-- PostgreSQL and runs again, so nothing is admitted on a lost count); {'month', month} when
-- no declared key matches; {'ok', month, nowMs, allowed, monthUsedBefore, counted,
-- oldestCounted, newestCounted} with the hourly count before this request and its oldest and
-- newest bucket ('' when nothing is counted), followed, on a consume refused for the hourly
-- limit only, by the counted buckets (bucket, count, ...) from which Retry-After is computed.
--
-- O(1) on the common path: besides the buckets, the hash holds a summary field '-1' =
-- 'total,oldest,newest' of the buckets it holds, kept up to date by every consume. Buckets
-- are only read when they leave the window (at most once each, with one HMGET of at most 61
-- fields) or for Retry-After. The field name is a negative bucket number on purpose: the
-- previous version of this script (which kept no summary, rolling deployments run both)
-- treats it as a stale bucket, counts nothing for it and deletes it on every consume, and a
-- hash without summary is summed from all its buckets once (HGETALL). So whichever version
-- wrote last, the next decision is exact.
local SUMMARY = '-1'

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

local hourly_limit = tonumber(ARGV[1])
local monthly_limit = tonumber(ARGV[2])
local consume = ARGV[4] == 'consume'

-- The buckets the hash holds: their total, oldest and newest (nil when none).
local total, oldest, newest = 0, nil, nil
local all_fields
local summary = redis.call('HGET', KEYS[1], SUMMARY)
if summary then
  local t, o, n = string.match(summary, '^(%d+),(%d+),(%d+)$')
  if t then total, oldest, newest = tonumber(t), tonumber(o), tonumber(n) end
end
if not newest then
  all_fields = redis.call('HGETALL', KEYS[1])
  for i = 1, #all_fields, 2 do
    local bucket = tonumber(all_fields[i])
    if bucket >= 0 then
      total = total + tonumber(all_fields[i + 1])
      if not oldest or bucket < oldest then oldest = bucket end
      if not newest or bucket > newest then newest = bucket end
    end
  end
end

-- The newest bucket wins over the clock if the clock stepped back (see currentBucket).
local current = math.floor(now_ms / 60000)
if newest and newest > current then current = newest end
local window_start = current - 60

-- Buckets as read (flat bucket, count list): splits them into stale ones and the window.
local counted, first = total, oldest
local stale = {}
local window_buckets
local function split(fields)
  counted, first, window_buckets = 0, nil, {}
  for i = 1, #fields, 2 do
    local bucket = tonumber(fields[i])
    if bucket >= 0 then
      if bucket < window_start then
        stale[#stale + 1] = fields[i]
      else
        counted = counted + tonumber(fields[i + 1])
        if not first or bucket < first then first = bucket end
        window_buckets[#window_buckets + 1] = bucket
        window_buckets[#window_buckets + 1] = tonumber(fields[i + 1])
      end
    end
  end
end
-- The buckets from..to as a flat list, absent ones left out.
local function read_range(from, to)
  local names = {}
  for bucket = from, to do names[#names + 1] = string.format('%d', bucket) end
  local counts = redis.call('HMGET', KEYS[1], unpack(names))
  local fields = {}
  for i = 1, #names do
    if counts[i] then
      fields[#fields + 1] = names[i]
      fields[#fields + 1] = counts[i]
    end
  end
  return fields
end

local drop_all = false
if all_fields then
  split(all_fields)
elseif oldest and oldest < window_start then
  if newest < window_start then
    -- Everything left the window.
    counted, first, drop_all = 0, nil, true
  elseif newest - oldest <= 60 then
    -- Always the case: the summary's buckets were all in one window when it was written.
    split(read_range(oldest, newest))
  else
    -- A summary no consume wrote; read everything rather than a range this long.
    split(redis.call('HGETALL', KEYS[1]))
  end
end
if counted == 0 then newest = nil end

local allowed = 0
if used < monthly_limit and counted < hourly_limit then allowed = 1 end

if consume then
  if drop_all then
    redis.call('DEL', KEYS[1])
  elseif #stale > 0 then
    redis.call('HDEL', KEYS[1], unpack(stale))
  end
  if allowed == 1 then
    redis.call('HINCRBY', KEYS[1], string.format('%d', current), 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
    redis.call('INCR', month_key)
  end
  -- A hash without buckets needs no summary (and must not be created without a TTL).
  local stored = counted + allowed
  if stored > 0 and (allowed == 1 or all_fields or #stale > 0) then
    local stored_newest = newest
    if allowed == 1 then stored_newest = current end
    redis.call('HSET', KEYS[1], SUMMARY, string.format('%d,%d,%d', stored, first or current, stored_newest))
  end
end

local reply = {'ok', month, now_ms, allowed, used, counted, first or '', newest or ''}
if consume and allowed == 0 and used < monthly_limit then
  if not window_buckets then split(read_range(first, newest)) end
  for i = 1, #window_buckets do reply[#reply + 1] = window_buckets[i] end
end
return reply
