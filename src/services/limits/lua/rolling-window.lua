-- One event against a rolling window (rolling-window.ts): at most ARGV[3] events in any
-- ARGV[2] ms ending now. KEYS[1] the subject's sorted set of admitted events (score: their time
-- in ms); ARGV[1] now in ms, ARGV[4] this event's unique member.
-- Drops the events that left the window, adds this one when the window has room (a refused
-- event is not logged) and returns { events in the window before this one, the oldest's time or -1 }.
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local oldest = -1
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
if count < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
end
return { count, oldest }
