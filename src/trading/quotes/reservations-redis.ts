/**
 * Firm-quote reservations shared by every instance on one Redis (with `REDIS_URL`): a pool's held
 * output, each wallet's funds promised and the line at them, each client's bounds (quotes per wallet
 * and in all, pool share) and the output all quotes hold per pool side live in Redis, so no two
 * instances promise the same tokens and neither a wallet's funds nor a client's bounds multiply with
 * the number of instances. One Lua script checks and records a quote atomically; a quote lasts until its
 * blockhash expires (the block height `FirmQuotes` uses), is delivered, or is cancelled.
 *
 * Pricing stays synchronous over each instance's pools: every instance mirrors the other instances'
 * holds into its own pools (published by the script, and returned by it when missed), so later quotes
 * price without them. Each hold on a pool gets the pool's next sequence number; a quote is recorded only
 * if no other instance's hold on its pools is newer than what the instance priced with, otherwise the
 * missed holds are mirrored and the quote is priced again (`ReservationConflict`). An instance's own
 * holds are in its pools before the script runs, as in one process.
 */
import { randomBytes } from "node:crypto";
import type { Address } from "@solana/kit";
import type { Redis } from "ioredis";
import { connectRedisPair } from "../../storage/redis.js";
import type { PoolHold, SyncMarket } from "../spot/market.js";
import {
  checkLegsStillPay,
  clientLimit,
  type FirmQuoteLimits,
  type FirmQuoteTerms,
  fundsAwaited,
  fundsKeyOf,
  insufficientFunds,
  type PoolLeg,
  poolHold,
  poolShare,
  ReservationConflict,
  type ReservationStore,
  type ReservedQuote,
  walletKeyOf,
  walletLimit,
} from "./firm-quotes.js";
import { TURN_GRACE_BLOCKS } from "./funds-line.js";
import {
  type EndedTicket,
  FamiliesByPair,
  type FamilyMember,
  type FamilyRequest,
  joinWithQuote,
  withoutHolds,
} from "./quote-family.js";
import { newTicketSeed, type QuoteTicket, quoteTicket } from "./quote-ticket.js";

/** Expired quotes dropped per script run, at most (the rest on the next runs). */
const PRUNE_BATCH = 256;
/** Seconds a wallet's line outlives its last quote: places lapse by block height long before. */
const LINE_TTL_SECONDS = 600;

/** Decimal-string arithmetic (amounts are u64, beyond Lua's exact doubles), and dropping a quote. */
const LIBRARY = `
local P = ARGV[1]
local function cmp(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end
local function add(a, b)
  local r, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local s = carry + (i > 0 and (a:byte(i) - 48) or 0) + (j > 0 and (b:byte(j) - 48) or 0)
    r[#r + 1] = string.char(48 + s % 10)
    carry = math.floor(s / 10)
    i = i - 1
    j = j - 1
  end
  return string.reverse(table.concat(r))
end
local function sub(a, b)
  if cmp(a, b) <= 0 then return '0' end
  local r, borrow, i, j = {}, 0, #a, #b
  while i > 0 do
    local d = (a:byte(i) - 48) - borrow - (j > 0 and (b:byte(j) - 48) or 0)
    if d < 0 then d = d + 10; borrow = 1 else borrow = 0 end
    r[#r + 1] = string.char(48 + d)
    i = i - 1
    j = j - 1
  end
  local s = (string.gsub(string.reverse(table.concat(r)), '^0+', ''))
  if s == '' then return '0' end
  return s
end
local function mul(a, k)
  if k == 0 or a == '0' then return '0' end
  local r, carry = {}, 0
  for i = #a, 1, -1 do
    local p = (a:byte(i) - 48) * k + carry
    r[#r + 1] = string.char(48 + p % 10)
    carry = math.floor(p / 10)
  end
  while carry > 0 do
    r[#r + 1] = string.char(48 + carry % 10)
    carry = math.floor(carry / 10)
  end
  return string.reverse(table.concat(r))
end
local function hadd(key, field, amount)
  redis.call('HSET', key, field, add(redis.call('HGET', key, field) or '0', amount))
end
local function hsub(key, field, amount)
  local left = sub(redis.call('HGET', key, field) or '0', amount)
  if left == '0' then redis.call('HDEL', key, field) else redis.call('HSET', key, field, left) end
end
-- Ends a quote: its counts, funds and pool holds; 'cancel' tells the other instances to free their mirrors.
local function drop(id, kind)
  redis.call('ZREM', P .. 'exp', id)
  local raw = redis.call('GET', P .. 'q:' .. id)
  if not raw then return 0 end
  redis.call('DEL', P .. 'q:' .. id)
  local q = cjson.decode(raw)
  local ck, wk, fk = P .. 'c:' .. q.c, P .. 'w:' .. q.w, P .. 'f:' .. (q.f or '')
  if redis.call('HINCRBY', ck, 'n', -1) <= 0 then redis.call('DEL', ck)
  else for _, h in ipairs(q.h) do hsub(ck, 'h:' .. h[1], h[2]) end end
  for _, h in ipairs(q.h) do hsub(P .. 'held', h[1], h[2]) end
  if redis.call('HINCRBY', wk, 'n', -1) <= 0 then redis.call('DEL', wk) else hsub(wk, 'm:' .. q.m, q.a) end
  -- (Quotes recorded before wallets' funds were counted across clients have no 'f'.)
  if q.f then
    hsub(fk, 'm', q.a)
    if redis.call('HEXISTS', fk, 'm') == 0 then
      redis.call('HDEL', fk, 'v')
      -- A line left waits for block heights, not time: it lapses by itself well before this.
      if redis.call('HEXISTS', fk, 'q') == 1 then redis.call('EXPIRE', fk, ${LINE_TTL_SECONDS}) end
    end
  end
  for _, p in ipairs(q.p) do
    redis.call('ZREM', P .. 'p:' .. p[1], p[2])
    if kind == 'cancel' or kind == 'replace' then
      redis.call('PUBLISH', P .. 'events', cjson.encode({k = 'cancel', p = p[1], e = p[2]}))
    end
  end
  -- The quote carrying a family's footprint ends the family, unless a newer one replaces it; the
  -- ticket's rent is taken back after its expiry (a family never issued has none).
  if q.y and kind ~= 'replace' then
    local yk = P .. 'fam:' .. q.y
    local fam = redis.call('GET', yk)
    if fam and cjson.decode(fam).q == id then
      redis.call('DEL', yk)
      if kind ~= 'cancel' and q.ts then redis.call('ZADD', P .. 'tix', q.v, cjson.encode({s = q.ts, b = q.tb})) end
    end
  end
  return 1
end
`;

/**
 * ARGV: prefix, request (JSON). Drops expired quotes, then: a conflict (another instance's holds on the
 * quote's pools newer than it priced with), a refusal (a bound, in FirmQuotes' order), or the quote
 * recorded with each leg's hold (unless `dry`).
 */
const RESERVE_SCRIPT = `${LIBRARY}
local r = cjson.decode(ARGV[2])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'exp', '-inf', '(' .. r.bh, 'LIMIT', 0, ${PRUNE_BATCH})) do
  drop(id, nil)
end
local conflicts = {}
for _, l in ipairs(r.l) do
  local seq = tonumber(redis.call('GET', P .. 's:' .. l[1]) or '0')
  if seq ~= l[2] then
    local newer
    if l[2] > seq then newer = redis.call('ZRANGE', P .. 'p:' .. l[1], 0, -1)
    else newer = redis.call('ZRANGEBYSCORE', P .. 'p:' .. l[1], '(' .. l[2], '+inf') end
    for _, e in ipairs(newer) do
      if cjson.decode(e).i ~= r.i then
        conflicts[#conflicts + 1] = {l[1], seq, newer}
        break
      end
    end
  end
end
if #conflicts > 0 then return cjson.encode({x = conflicts}) end
-- A quote of a family: the family as the caller read it (else price again), ended when its ticket was
-- seen, and the quote it replaces, counted as gone.
local rp, rph = nil, {}
if r.y then
  local cur = redis.call('GET', P .. 'fam:' .. r.y.k)
  if (cur and cjson.decode(cur).v or 0) ~= r.y.v then return cjson.encode({fc = 1}) end
  if r.y.e then drop(r.y.e, 'done') end
  local raw = r.y.rp and redis.call('GET', P .. 'q:' .. r.y.rp)
  if raw then
    rp = cjson.decode(raw)
    -- Only a quote of the same client, wallet and input counts as gone (a family's always is).
    if rp.w ~= r.w or rp.m ~= r.m then rp = nil else
      for _, h in ipairs(rp.h) do rph[h[1]] = h[2] end
    end
  end
end
local gone = rp and 1 or 0
local wk, ck = P .. 'w:' .. r.w, P .. 'c:' .. r.c
local wn = tonumber(redis.call('HGET', wk, 'n') or '0') - gone
if r.pw > 0 and wn >= r.pw then return cjson.encode({no = 'wallet_limit', n = wn}) end
local cn = tonumber(redis.call('HGET', ck, 'n') or '0') - gone
if r.pc > 0 and cn >= r.pc then return cjson.encode({no = 'client_limit', n = cn}) end
-- The wallet's funds, as FirmQuotes.checkFunds and FundsLine: every client's quotes count, and a
-- client refused for others' quotes takes its place in line.
local fk = P .. 'f:' .. r.f
local spent = rp and rp.a or '0'
local committed = sub(redis.call('HGET', fk, 'm') or '0', spent)
local line = {}
for _, place in ipairs(cjson.decode(redis.call('HGET', fk, 'q') or '[]')) do
  if place.u >= r.bh then line[#line + 1] = place end
end
local fits = cmp(r.bal, add(committed, r.a)) >= 0
if not fits or (line[1] and line[1].c ~= r.c) then
  if cmp(r.bal, add(sub(redis.call('HGET', wk, 'm:' .. r.m) or '0', spent), r.a)) >= 0 then
    local u, at = math.max(tonumber(redis.call('HGET', fk, 'v') or '0'), r.bh), nil
    for i, place in ipairs(line) do
      if place.c == r.c then at = i break end
      u = math.max(u, place.u)
    end
    if at then line[at].u = math.max(line[at].u, u + r.tg) else line[#line + 1] = {c = r.c, u = u + r.tg} end
    redis.call('HSET', fk, 'q', cjson.encode(line))
    if redis.call('HEXISTS', fk, 'm') == 0 then redis.call('EXPIRE', fk, ${LINE_TTL_SECONDS}) end
  end
  if fits then return cjson.encode({no = 'funds_awaited'}) end
  return cjson.encode({no = 'insufficient_funds', v = committed})
end
if r.bps > 0 then
  for _, h in ipairs(r.h) do
    local held = sub(add(redis.call('HGET', ck, 'h:' .. h[1]) or '0', h[2]), rph[h[1]] or '0')
    if cmp(mul(held, 10000), mul(h[3], r.bps)) > 0 then
      return cjson.encode({no = 'pool_share', v = held, reserve = h[3]})
    end
  end
end
if r.ph > 0 then
  for _, h in ipairs(r.h) do
    local held = sub(add(redis.call('HGET', P .. 'held', h[1]) or '0', h[2]), rph[h[1]] or '0')
    if cmp(mul(held, 10000), mul(h[3], r.ph)) > 0 then
      return cjson.encode({no = 'pool_hold', v = held, reserve = h[3]})
    end
  end
end
if r.dry then return cjson.encode({ok = 1}) end
if rp then drop(r.y.rp, 'replace') end
local q = {c = r.c, w = r.w, f = r.f, m = r.m, a = r.a, h = {}, p = {}, v = r.lv}
if r.y then
  q.y, q.ts, q.tb = r.y.k, r.y.s, r.y.b
  redis.call('SET', P .. 'fam:' .. r.y.k, r.y.st)
end
redis.call('HINCRBY', wk, 'n', 1)
redis.call('HINCRBY', ck, 'n', 1)
hadd(wk, 'm:' .. r.m, r.a)
hadd(fk, 'm', r.a)
redis.call('HSET', fk, 'v', math.max(tonumber(redis.call('HGET', fk, 'v') or '0'), r.lv))
local served = {}
for _, place in ipairs(line) do if place.c ~= r.c then served[#served + 1] = place end end
if #served == 0 then redis.call('HDEL', fk, 'q') else redis.call('HSET', fk, 'q', cjson.encode(served)) end
redis.call('PERSIST', fk)
for _, h in ipairs(r.h) do
  q.h[#q.h + 1] = {h[1], h[2]}
  hadd(ck, 'h:' .. h[1], h[2])
  hadd(P .. 'held', h[1], h[2])
end
local seqs = {}
for _, l in ipairs(r.l) do
  local seq = redis.call('INCR', P .. 's:' .. l[1])
  local e = cjson.encode({s = seq, i = r.i, q = r.id, d = l[3], a = l[4], n = l[5], v = r.lv, t = r.t, y = r.y and r.y.k})
  redis.call('ZADD', P .. 'p:' .. l[1], seq, e)
  q.p[#q.p + 1] = {l[1], e}
  redis.call('PUBLISH', P .. 'events', cjson.encode({k = 'reserve', p = l[1], e = e}))
  seqs[#seqs + 1] = seq
end
redis.call('SET', P .. 'q:' .. r.id, cjson.encode(q))
redis.call('ZADD', P .. 'exp', r.lv, r.id)
return cjson.encode({ok = 1, s = seqs})
`;

/** ARGV: prefix, quote id, 'cancel' (never issued: other instances free their mirrors) or 'done'. */
const RELEASE_SCRIPT = `${LIBRARY}
return drop(ARGV[2], ARGV[3])
`;

/** ARGV: prefix, block height. Takes the tickets of ended families whose quotes all expired before it. */
const TAKE_TICKETS_SCRIPT = `
local P = ARGV[1]
local ended = redis.call('ZRANGEBYSCORE', P .. 'tix', '-inf', '(' .. ARGV[2], 'LIMIT', 0, ${PRUNE_BATCH})
for _, entry in ipairs(ended) do redis.call('ZREM', P .. 'tix', entry) end
return ended
`;

declare module "ioredis" {
  interface RedisCommander {
    /** RESERVE_SCRIPT, registered with defineCommand. */
    oddsgateFirmReserve(prefix: string, request: string): Promise<string>;
    /** RELEASE_SCRIPT, registered with defineCommand. */
    oddsgateFirmRelease(prefix: string, id: string, kind: "cancel" | "done"): Promise<number>;
    /** TAKE_TICKETS_SCRIPT, registered with defineCommand. */
    oddsgateTakeTickets(prefix: string, blockHeight: string): Promise<string[]>;
  }
}

/** A hold as the script records and publishes it. */
interface HoldEntry {
  /** The pool's sequence number of the hold. */
  s: number;
  /** The instance that made it. */
  i: string;
  /** Its quote. */
  q: string;
  /** The output side (0 or 1) and the output held, the input promised in. */
  d: 0 | 1;
  a: string;
  n: string;
  /** The last valid block height of its quote. */
  v: number;
  /** Its family's ticket and family key, for a family's quote. */
  t?: Address;
  y?: string;
}

/** A family as kept in Redis (`fam:<key>`): its version, the quote carrying it, its ticket and live members. */
interface StoredFamily {
  v: number;
  q: string;
  /** Its ticket's seed and base (none for a family of prediction-market orders). */
  s?: string;
  b?: Address;
  /** Members as [last valid block height, input, [[max out, input] per leg]], amounts as decimal text. */
  m: [number, string, [string, string][]][];
}

type ReserveReply =
  | { ok: 1; s?: number[] }
  | { fc: 1 }
  | { x: [string, number, string[] | Record<string, never>][] }
  | { no: "wallet_limit" | "client_limit"; n: number }
  | { no: "insufficient_funds"; v: string }
  | { no: "funds_awaited" }
  | { no: "pool_share" | "pool_hold"; v: string; reserve: string };

/** What an instance knows of one pool's holds across instances. */
interface PoolView {
  /** Every hold on the pool with a sequence number up to this one is in the pool here (or ended). */
  synced: number;
  /** The `view()` at which another instance's hold was last mirrored into it. */
  changedAt: number;
}

export interface RedisReservationsOptions {
  url: string;
  /** Prefix of every key (REDIS_PREFIX). */
  prefix: string;
  limits: FirmQuoteLimits;
  /** This instance's pool of a given address, to mirror other instances' holds into. */
  pool(address: string): SyncMarket | undefined;
  logger?: { error(object: object, message: string): void };
}

/** Firm-quote reservations in Redis, shared by every instance on it. */
export class RedisReservations implements ReservationStore {
  /** Names this instance's holds, so a conflict is only another instance's. */
  private readonly instance = randomBytes(8).toString("hex");
  private readonly keys: string;
  private readonly pools = new Map<string, PoolView>();
  /** Other instances' holds mirrored here, by pool and quote, until they close. */
  private readonly mirrored = new Map<string, PoolHold>();
  private epoch = 0;
  /** The highest block height a quote was checked at here. */
  private height = 0n;
  /** The holds in this instance's pools of each family's current quote (its own or mirrored), to lend them. */
  private readonly familyHolds = new FamiliesByPair<{ quote: string; holds: PoolHold[] }>();

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly options: RedisReservationsOptions,
  ) {
    this.keys = `${options.prefix}firm:`;
  }

  /** Connects (failing with a message naming REDIS_URL when it cannot) and follows other instances' holds. */
  static async connect(options: RedisReservationsOptions): Promise<RedisReservations> {
    const [redis, subscriber] = await connectRedisPair(options.url);
    redis.defineCommand("oddsgateFirmReserve", { numberOfKeys: 0, lua: RESERVE_SCRIPT });
    redis.defineCommand("oddsgateFirmRelease", { numberOfKeys: 0, lua: RELEASE_SCRIPT });
    redis.defineCommand("oddsgateTakeTickets", { numberOfKeys: 0, lua: TAKE_TICKETS_SCRIPT });
    const store = new RedisReservations(redis, subscriber, options);
    subscriber.on("message", (_channel, message) => store.receive(message));
    // Messages sent while reconnecting are lost: until a script answers again, no pool counts as synced.
    subscriber.on("reconnecting", () => {
      for (const view of store.pools.values()) view.synced = 0;
    });
    await subscriber.subscribe(`${store.keys}events`);
    return store;
  }

  view(): number {
    return this.epoch;
  }

  async check(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    family?: string,
  ): Promise<void> {
    if (blockHeight > this.height) this.height = blockHeight;
    // The family's quote is counted as gone; if another joined it meanwhile, that one.
    for (let attempt = 0; ; attempt++) {
      const stored = family === undefined ? undefined : await this.readFamily(family);
      const replacing: FamilyJoin | undefined = stored && {
        key: family as string,
        version: stored.v,
        replaces: stored.q,
        ticket: undefined,
        stored: "",
        terms: quote,
        legs: [],
      };
      const reply = await this.run(quote, blockHeight, 0n, [], true, "", replacing);
      if (!("fc" in reply)) return this.refusal(reply, quote);
      if (attempt === 2) throw new ReservationConflict("other quotes of its family kept arriving");
    }
  }

  async reserve(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
    legs: readonly PoolLeg[] = [],
    view = this.epoch,
    family?: FamilyRequest,
  ): Promise<ReservedQuote> {
    for (const leg of legs) {
      if (this.viewOf(leg.pool.key).changedAt > view)
        throw new ReservationConflict("another instance held output of this pool while it was priced");
    }
    const id = randomBytes(12).toString("hex");
    const joining =
      family && (await this.joinFamily(family, id, quote, blockHeight, lastValidBlockHeight, legs));
    const own = joining && this.familyHolds.get(joining.key);
    if (own) withoutHolds(own.holds, () => checkLegsStillPay(legs));
    else checkLegsStillPay(legs);
    const terms = joining?.terms ?? quote;
    const held = joining?.legs ?? legs;
    if (blockHeight > this.height) this.height = blockHeight;
    // Held here before Redis answers, so this instance's concurrent quotes price without them, as in one process.
    const holds = held.map((leg) =>
      leg.pool.reserve(
        leg.outputMint,
        leg.maxOut,
        lastValidBlockHeight,
        leg.inAmount,
        joining?.ticket?.address,
      ),
    );
    const releaseHolds = () => {
      for (const hold of holds) hold.release();
    };
    let reply: ReserveReply;
    try {
      reply = await this.run(terms, blockHeight, lastValidBlockHeight, held, false, id, joining);
      if ("x" in reply) {
        for (const [pool, seq, newer] of reply.x) this.mirror(pool, seq, newer, blockHeight);
        throw new ReservationConflict("another instance held output of this pool while it was priced");
      }
      if ("fc" in reply)
        throw new ReservationConflict("another instance quoted for the same family while it was priced");
      this.refusal(reply, quote);
    } catch (error) {
      releaseHolds();
      throw error;
    }
    legs.forEach((leg, index) => {
      const seq = "ok" in reply ? reply.s?.[index] : undefined;
      if (seq !== undefined) this.viewOf(leg.pool.key).synced = seq;
    });
    if (joining) this.holdForFamily(joining.key, id, holds);
    let ended = false;
    const end = (kind: "cancel" | "done") => {
      if (ended) return;
      ended = true;
      this.redis.oddsgateFirmRelease(this.keys, id, kind).catch((error: unknown) => {
        // Its blockhash expiry ends it in Redis anyway.
        this.options.logger?.error({ err: error }, "firm quotes: releasing a reservation in Redis failed");
      });
    };
    const attach = (attached: readonly PoolHold[]) => {
      // Ends in Redis once every pool here saw its output delivered. Holds that closed because the
      // blockhash expired need no message: the script drops expired quotes itself, and sending one
      // for each would queue a slot's worth of scripts in front of the next quotes.
      let open = attached.length;
      for (const hold of attached)
        hold.onClose(() => {
          open -= 1;
          if (open === 0 && lastValidBlockHeight >= this.height) end("done");
        });
    };
    return {
      holds,
      ...(joining?.ticket ? { ticket: joining.ticket } : {}),
      attach,
      cancel: () => {
        // A re-quote not issued after all still holds for the family's earlier quotes, which may land.
        if (joining?.replaces) return attach(holds);
        releaseHolds();
        end("cancel");
      },
    };
  }

  async ticketOf(key: string): Promise<QuoteTicket | undefined> {
    return ticketOfStored(await this.readFamily(key));
  }

  lend<T>(pair: string, price: () => T): T {
    const holds: PoolHold[] = [];
    for (const family of this.familyHolds.ofPair(pair)) holds.push(...family.holds);
    return holds.length === 0 ? price() : withoutHolds(holds, price);
  }

  async takeEndedTickets(blockHeight: bigint): Promise<EndedTicket[]> {
    const ended = await this.redis.oddsgateTakeTickets(this.keys, blockHeight.toString());
    return ended.map((raw) => {
      const entry = JSON.parse(raw) as { s: string; b: Address };
      return { ticket: quoteTicket(entry.b, entry.s), after: blockHeight - 1n };
    });
  }

  /**
   * What a family's quote records: the family as Redis has it (ended when its ticket was seen), the
   * quote joining it, and what the family then holds, the largest of each amount of its live quotes.
   */
  private async joinFamily(
    request: FamilyRequest,
    id: string,
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
    legs: readonly PoolLeg[],
  ): Promise<FamilyJoin> {
    const stored = await this.readFamily(request.key);
    const live = stored && (request.landed === undefined || request.landed !== stored.s) ? stored : undefined;
    const joined = joinWithQuote(quote, legs, lastValidBlockHeight, live?.m.map(decodeMember), blockHeight);
    const { members } = joined;
    const ticket = live ? ticketOfStored(live) : request.base && quoteTicket(request.base, newTicketSeed());
    const next: StoredFamily = {
      v: (stored?.v ?? 0) + 1,
      q: id,
      ...(ticket ? { s: ticket.seed, b: ticket.base } : {}),
      m: members.map(encodeMember),
    };
    return {
      key: request.key,
      version: stored?.v ?? 0,
      ...(stored && !live ? { ended: stored.q } : {}),
      ...(live ? { replaces: live.q } : {}),
      ticket,
      stored: JSON.stringify(next),
      terms: joined.terms,
      legs: joined.legs,
    };
  }

  private async readFamily(key: string): Promise<StoredFamily | undefined> {
    const raw = await this.redis.get(`${this.keys}fam:${key}`);
    return raw === null ? undefined : (JSON.parse(raw) as StoredFamily);
  }

  /** Records `holds` as family `key`'s, for quote `quote`; the holds of the quote it replaced are given back. */
  private holdForFamily(key: string, quote: string, holds: PoolHold[]): void {
    const previous = this.familyHolds.get(key);
    if (previous?.quote === quote) {
      previous.holds.push(...holds);
      return;
    }
    this.familyHolds.set(key, { quote, holds });
    for (const hold of previous?.holds ?? []) hold.release();
    let open = holds.length;
    for (const hold of holds)
      hold.onClose(() => {
        open -= 1;
        if (open === 0 && this.familyHolds.get(key)?.quote === quote) this.familyHolds.delete(key);
      });
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    await Promise.all(
      [this.redis, this.subscriber].map((client) => client.quit().catch(() => client.disconnect())),
    );
  }

  private run(
    quote: FirmQuoteTerms & { balance: bigint },
    blockHeight: bigint,
    lastValidBlockHeight: bigint,
    legs: readonly PoolLeg[],
    dry: boolean,
    id = "",
    family?: FamilyJoin,
  ): Promise<ReserveReply> {
    const { limits } = this.options;
    const request = {
      id,
      i: this.instance,
      bh: Number(blockHeight),
      lv: Number(lastValidBlockHeight),
      c: quote.client,
      w: walletKeyOf(quote),
      f: fundsKeyOf(quote),
      m: quote.inputMint,
      a: quote.inAmount.toString(),
      bal: quote.balance.toString(),
      pw: limits.perWallet,
      pc: limits.perClient,
      bps: limits.poolShareBps ?? 0,
      ph: limits.poolHoldBps ?? 0,
      tg: Number(TURN_GRACE_BLOCKS),
      dry,
      h: (quote.holds ?? []).map((hold) => [hold.side, hold.amount.toString(), hold.reserve.toString()]),
      l: legs.map((leg) => [
        leg.pool.key,
        this.viewOf(leg.pool.key).synced,
        leg.pool.sideOf(leg.outputMint),
        leg.maxOut.toString(),
        leg.inAmount.toString(),
      ]),
      ...(family
        ? {
            ...(family.ticket ? { t: family.ticket.address } : {}),
            y: {
              k: family.key,
              v: family.version,
              ...(family.ticket ? { s: family.ticket.seed, b: family.ticket.base } : {}),
              st: family.stored,
              ...(family.ended ? { e: family.ended } : {}),
              ...(family.replaces ? { rp: family.replaces } : {}),
            },
          }
        : {}),
    };
    return this.redis
      .oddsgateFirmReserve(this.keys, JSON.stringify(request))
      .then((raw) => JSON.parse(raw) as ReserveReply);
  }

  /** Throws the refusal a reply carries, worded as `FirmQuotes` words it. */
  private refusal(reply: ReserveReply, quote: FirmQuoteTerms & { balance: bigint }): void {
    if (!("no" in reply)) return;
    switch (reply.no) {
      case "wallet_limit":
        throw walletLimit(quote, reply.n);
      case "client_limit":
        throw clientLimit(reply.n);
      case "insufficient_funds":
        throw insufficientFunds(quote, BigInt(reply.v));
      case "funds_awaited":
        throw fundsAwaited(quote);
      case "pool_share":
        throw poolShare(
          BigInt(reply.v),
          BigInt(reply.reserve),
          BigInt(this.options.limits.poolShareBps ?? 0),
        );
      case "pool_hold":
        throw poolHold(BigInt(reply.v), BigInt(reply.reserve), BigInt(this.options.limits.poolHoldBps ?? 0));
    }
  }

  private viewOf(pool: string): PoolView {
    let view = this.pools.get(pool);
    if (!view) {
      view = { synced: 0, changedAt: 0 };
      this.pools.set(pool, view);
    }
    return view;
  }

  /** Mirrors the holds a conflict named; the pool is then known up to `seq`. */
  private mirror(
    pool: string,
    seq: number,
    newer: string[] | Record<string, never>,
    blockHeight: bigint,
  ): void {
    for (const raw of Array.isArray(newer) ? newer : []) {
      const entry = JSON.parse(raw) as HoldEntry;
      if (BigInt(entry.v) >= blockHeight) this.hold(pool, entry);
    }
    this.viewOf(pool).synced = seq;
  }

  /** A message from the script: another instance's hold to mirror, or a cancelled one to free. */
  private receive(message: string): void {
    try {
      const event = JSON.parse(message) as { k: "reserve" | "cancel"; p: string; e: string };
      const entry = JSON.parse(event.e) as HoldEntry;
      if (event.k === "cancel") {
        this.mirrored.get(`${event.p}|${entry.q}`)?.release();
        return;
      }
      this.hold(event.p, entry);
      const view = this.viewOf(event.p);
      // Messages arrive in the order the script ran: once a pool is synced (or from its first hold on),
      // each one extends it.
      if (entry.s === view.synced + 1 || (view.synced > 0 && entry.s > view.synced)) view.synced = entry.s;
    } catch (error) {
      this.options.logger?.error({ err: error }, "firm quotes: a reservation message was unreadable");
    }
  }

  /** Mirrors another instance's hold into this instance's pool (its own holds are there already). */
  private hold(address: string, entry: HoldEntry): void {
    if (entry.i === this.instance) return;
    const key = `${address}|${entry.q}`;
    const pool = this.options.pool(address);
    if (!pool || this.mirrored.has(key)) return;
    const hold = pool.reserve(
      pool.mints[entry.d] as Address,
      BigInt(entry.a),
      BigInt(entry.v),
      BigInt(entry.n),
      entry.t,
    );
    this.mirrored.set(key, hold);
    if (entry.y !== undefined) this.holdForFamily(entry.y, entry.q, [hold]);
    hold.onClose(() => this.mirrored.delete(key));
    this.epoch += 1;
    this.viewOf(address).changedAt = this.epoch;
  }
}

/** A family quote on its way to Redis: the family it joins and what it then holds. */
interface FamilyJoin {
  key: string;
  /** The version of the family the quote was priced with (0: none). */
  version: number;
  /** The quote of a family whose ticket was seen: it ends. */
  ended?: string;
  /** The quote carrying the family's footprint until now. */
  replaces?: string;
  ticket: QuoteTicket | undefined;
  /** The family as it is once this quote is recorded. */
  stored: string;
  terms: FirmQuoteTerms & { balance: bigint };
  legs: readonly PoolLeg[];
}

function ticketOfStored(family: StoredFamily | undefined): QuoteTicket | undefined {
  return family?.b !== undefined && family.s !== undefined ? quoteTicket(family.b, family.s) : undefined;
}

function encodeMember(member: FamilyMember): StoredFamily["m"][number] {
  return [
    Number(member.lastValidBlockHeight),
    member.inAmount.toString(),
    member.legs.map((leg) => [leg.maxOut.toString(), leg.inAmount.toString()]),
  ];
}

function decodeMember([lastValidBlockHeight, inAmount, legs]: StoredFamily["m"][number]): FamilyMember {
  return {
    lastValidBlockHeight: BigInt(lastValidBlockHeight),
    inAmount: BigInt(inAmount),
    legs: legs.map(([maxOut, legIn]) => ({ maxOut: BigInt(maxOut), inAmount: BigInt(legIn) })),
  };
}
