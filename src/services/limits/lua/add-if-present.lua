-- Adds requests admitted during an outage to a month counter (KEYS[1]) by ARGV[1], if the
-- counter exists; -1 if it does not (the caller seeds it from PostgreSQL first).
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
