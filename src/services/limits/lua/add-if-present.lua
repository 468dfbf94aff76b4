-- Adds ARGV[1] to a month counter (KEYS[1]) if the counter exists: requests the fallback
-- admitted during an outage, less those taken back (a 5xx answer, or a request Redis counted
-- although the fallback answered it). A negative sum is added to the month's refunds counter
-- (KEYS[2], with the month counter's expiry); the month counter never goes below 0. Returns the
-- new count, or nil when the counter does not exist (the caller seeds it from PostgreSQL first).
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local delta = tonumber(ARGV[1])
local count = redis.call('INCRBY', KEYS[1], delta)
if count < 0 then
  redis.call('SET', KEYS[1], 0, 'KEEPTTL')
  delta = delta - count
  count = 0
end
if delta < 0 then
  redis.call('INCRBY', KEYS[2], -delta)
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
end
return count
