-- Takes back one admitted request (its answer was a 5xx, which counts nothing).
-- KEYS[1] the hourly hash, KEYS[2] the month counter, KEYS[3] that month's refunds counter;
-- ARGV[1] the bucket the request was counted in.
-- The month counter loses one (never below 0) and the refunds counter gains one, with the
-- month counter's expiry; a month counter Redis lost is left alone (its re-seed may or may not
-- hold the request: the count errs on the side of one too many). The bucket loses one and the
-- hash's summary field is dropped, so the next decision sums the buckets afresh (decide.lua).
local used = redis.call('GET', KEYS[2])
if used and tonumber(used) > 0 then
  redis.call('DECR', KEYS[2])
  redis.call('INCR', KEYS[3])
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
end
local in_bucket = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if in_bucket > 0 then
  if in_bucket == 1 then
    redis.call('HDEL', KEYS[1], ARGV[1])
  else
    redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  end
  redis.call('HDEL', KEYS[1], '-1')
end
return 1
