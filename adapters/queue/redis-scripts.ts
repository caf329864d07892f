import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The Lua scripts of the Redis Streams queue (redis-streams.ts): each settles or moves entries in
 * one atomic step, and only while this consumer still owns the entry.
 */

const OWNED = `
-- 1: pending and ours; 0: not pending (settled already); -1: pending at another consumer.
local function owner(stream, group, id, consumer)
  local p = redis.call('XPENDING', stream, group, id, id, 1)
  if p[1] == nil then return 0 end
  if p[1][2] == consumer then return 1 end
  return -1
end
local function owned(stream, group, id, consumer)
  return owner(stream, group, id, consumer) == 1
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

class LuaScript {
  private readonly sha: string;
  constructor(private readonly lua: string) {
    this.lua = OWNED + lua;
    this.sha = createHash('sha1').update(this.lua).digest('hex');
  }
  async run(conn: Redis, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await conn.call('EVALSHA', [this.sha, keys.length, ...keys, ...args]);
    } catch (e) {
      if (!String((e as Error).message).startsWith('NOSCRIPT')) throw e;
      return conn.call('EVAL', [this.lua, keys.length, ...keys, ...args]);
    }
  }
}

/**
 * The settle scripts run only while we own the entry, so a command re-sent after a lost reply is
 * harmless. Answer 1 = settled, 0 = not pending any more, -1 = owned by another consumer.
 */

/**
 * An outbox job, added once: the first hand-over of its id marks it sent (for ARGV[3] ms) and adds
 * it; a repeat (a relay whose delete was lost, two processes relaying at once) adds nothing.
 * KEYS stream, sent marker; ARGV max length, job, marker ttl ms.
 */
export const addOnce = new LuaScript(`
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then return 0 end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'job', ARGV[2])
return 1`);

/** KEYS stream; ARGV group, consumer, entry id. */
export const settleDone = new LuaScript(`
local o = owner(KEYS[1], ARGV[1], ARGV[3], ARGV[2])
if o ~= 1 then return o end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1`);

/** KEYS stream, delayed; ARGV group, consumer, entry id, delay ms, next envelope. */
export const settleRetry = new LuaScript(`
local o = owner(KEYS[1], ARGV[1], ARGV[3], ARGV[2])
if o ~= 1 then return o end
redis.call('ZADD', KEYS[2], now_ms() + tonumber(ARGV[4]), ARGV[5])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1`);

/** KEYS stream, dead; ARGV group, consumer, entry id, dead max length, field, value, ... */
export const settleDead = new LuaScript(`
local o = owner(KEYS[1], ARGV[1], ARGV[3], ARGV[2])
if o ~= 1 then return o end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', unpack(ARGV, 5))
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1`);

/** KEYS delayed, stream; ARGV max length, batch. Answers {moved, ms until the next is due or -1}. */
export const promote = new LuaScript(`
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(due) do
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'job', m)
  redis.call('ZREM', KEYS[1], m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = -1
if nxt[2] then wait = math.max(0, math.floor(tonumber(nxt[2]) - now)) end
return {#due, wait}`);

/** KEYS stream; ARGV group, consumer, min idle ms, cursor, count. Answers {cursor, {{id, fields, deliveries}...}}. */
export const claim = new LuaScript(`
local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'COUNT', ARGV[5])
local out = {}
for _, e in ipairs(r[2]) do
  if type(e) == 'table' and type(e[2]) == 'table' then
    local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
    local n = 1
    if p[1] then n = p[1][4] end
    table.insert(out, {e[1], e[2], n})
  end
end
return {r[1], out}`);

/** KEYS stream; ARGV group, consumer, count. Entries pending in this consumer's name: {{id, fields, deliveries}...}. */
export const ownPending = new LuaScript(`
local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[3]), ARGV[2])
local out = {}
for _, e in ipairs(p) do
  local r = redis.call('XRANGE', KEYS[1], e[1], e[1])
  if r[1] then table.insert(out, {e[1], r[1][2], e[4]}) end
end
return out`);

/** KEYS stream; ARGV group, consumer, entry ids... Renews the lease of the ids still ours; answers the others. */
export const heartbeat = new LuaScript(`
local lost = {}
for i = 3, #ARGV do
  if owned(KEYS[1], ARGV[1], ARGV[i], ARGV[2]) then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  else
    table.insert(lost, ARGV[i])
  end
end
return lost`);

/** KEYS stream, delayed, dead; ARGV group. Answers {stream length, pending, delayed, dead}. */
export const stats = new LuaScript(`
local pending = 0
local p = redis.pcall('XPENDING', KEYS[1], ARGV[1])
if type(p) == 'table' and p.err == nil then pending = p[1] end
return {redis.call('XLEN', KEYS[1]), pending, redis.call('ZCARD', KEYS[2]), redis.call('XLEN', KEYS[3])}`);

/** KEYS dead, stream; ARGV max length, (dead entry id, envelope or '')... Re-drives entries still dead. */
export const redrive = new LuaScript(`
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('XDEL', KEYS[1], ARGV[i]) == 1 and ARGV[i + 1] ~= '' then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'job', ARGV[i + 1])
    n = n + 1
  end
end
return n`);

// ---- helpers -----------------------------------------------------------------------------------
