-- Adds ARGV[1] to a month counter (KEYS[1]) if the counter exists: requests the fallback
-- admitted during an outage, less those Redis counted although the fallback answered them
-- (negative: requests taken back; the counter never goes below 0). Returns the new count, or
-- nil when the counter does not exist (the caller seeds it from PostgreSQL first).
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
if count < 0 then
  redis.call('SET', KEYS[1], 0, 'KEEPTTL')
  return 0
end
return count
