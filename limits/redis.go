package limits

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions configure a Redis.
type RedisOptions struct {
	// URL is the server's redis:// or rediss:// URL (SWITCHBOARD_REDIS_URL).
	URL string
	// Prefix starts every key (default "switchboard:"), so one server can hold several
	// deployments' limits.
	Prefix string
	// Nodes is how many nodes share the limits (the fleet's live nodes); while Redis
	// cannot be reached each node keeps 1/Nodes of every limit itself. Nil is 1.
	Nodes func() int
	// Timeout bounds one Redis round trip (default 250 ms): a call is never held
	// longer than that by an unreachable Redis.
	Timeout time.Duration
	// RetryAfter is how long the limits stay on this node's share after Redis failed,
	// before Redis is tried again (default 1 s).
	RetryAfter time.Duration
	Logger     *slog.Logger
}

// Redis keeps upstream rate limits (Upstream) and bounds of concurrent holders (Slots)
// in Redis, shared by every node that uses the same server and prefix. Each decision is
// one atomic script, timed by the Redis server's clock, so nodes whose clocks differ
// still agree.
//
// It fails safe: when Redis cannot be reached, a node falls back to its share of every
// limit (1/Nodes of the rate, of the burst and of the slots), which it keeps in its own
// memory, says so once in its log (and once more when Redis is back), and counts the
// decisions taken that way (Fallbacks). Together the nodes then stay within the limit
// while none of them can reach Redis.
type Redis struct {
	o      RedisOptions
	client *redis.Client

	local *Local
	slots *localSlots

	retryAt   atomic.Int64 // unix nanoseconds: until then, the fallback is used
	down      atomic.Bool  // Redis failed and has not answered since
	fallbacks atomic.Uint64
	logMu     sync.Mutex
}

var (
	_ Upstream = (*Redis)(nil)
	_ Slots    = (*Redis)(nil)
)

// NewRedis returns a Redis for the server at o.URL. It does not connect yet; Ping
// checks that the server answers.
func NewRedis(o RedisOptions) (*Redis, error) {
	opts, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	if o.Prefix == "" {
		o.Prefix = "switchboard:"
	}
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Second
	}
	if o.Nodes == nil {
		o.Nodes = func() int { return 1 }
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	opts.DialTimeout = o.Timeout
	opts.ReadTimeout = o.Timeout
	opts.WriteTimeout = o.Timeout
	opts.MaxRetries = -1   // a failed decision falls back at once; retries would hold the call
	opts.DialerRetries = 1 // likewise a failed dial (the default tries five times)
	opts.DisableIdentity = true
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	return &Redis{o: o, client: redis.NewClient(opts), local: NewLocal(), slots: newLocalSlots()}, nil
}

// quiet is go-redis's logger: none. go-redis writes a line to stderr for every failed
// dial; Redis logs an outage once instead, in the process's own log.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// quietOnce silences go-redis's logger, which is global to the process, once.
var quietOnce sync.Once

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

// Close closes the connections to Redis.
func (r *Redis) Close() error { return r.client.Close() }

// Fallbacks is how many decisions were taken on this node's share because Redis could
// not be reached.
func (r *Redis) Fallbacks() uint64 { return r.fallbacks.Load() }

// Degraded reports whether the last attempt to reach Redis failed.
func (r *Redis) Degraded() bool { return r.down.Load() }

// takeScript is Local's gcra.take, atomically, on the Redis server's clock, in
// microseconds. KEYS: the bucket's tat, the window's end. ARGV: interval, burst, max
// wait. It returns {1 or 0 (taken or refused), wait}.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local t0 = math.max(now, tonumber(redis.call('GET', KEYS[2]) or '0'))
local iv = tonumber(ARGV[1])
local maxwait = tonumber(ARGV[3])
if iv <= 0 then
  local wait = t0 - now
  if wait > maxwait then return {0, wait} end
  return {1, wait}
end
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), t0)
local allow = math.max(tat - (tonumber(ARGV[2]) - 1) * iv, t0)
local wait = allow - now
if wait > maxwait then return {0, wait} end
local newtat = tat + iv
redis.call('SET', KEYS[1], string.format('%d', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1000)
return {1, wait}
`)

// blockScript moves a window's end later, never earlier. KEYS: the window's end. ARGV:
// the wait, in microseconds.
var blockScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local untl = now + tonumber(ARGV[1])
if untl > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], string.format('%d', untl), 'PX', math.ceil(tonumber(ARGV[1]) / 1000) + 1000)
end
return 1
`)

// keys are a connection's two keys; the braces keep them in one Redis Cluster slot.
func (r *Redis) keys(key string) []string {
	return []string{r.o.Prefix + "rate:{" + key + "}:tat", r.o.Prefix + "rate:{" + key + "}:blocked"}
}

// Take implements Upstream.
func (r *Redis) Take(ctx context.Context, key string, rate Rate, maxWait time.Duration) (time.Duration, bool) {
	if r.usable() {
		ctx, cancel := r.round(ctx)
		res, err := takeScript.Run(ctx, r.client, r.keys(key),
			rate.interval().Microseconds(), rate.burst(), maxWait.Microseconds()).Int64Slice()
		cancel()
		if err == nil && len(res) == 2 {
			r.up()
			return time.Duration(res[1]) * time.Microsecond, res[0] == 1
		}
		if err == nil {
			err = fmt.Errorf("unexpected answer %v", res)
		}
		r.failed("take a rate-limit token", err)
	}
	r.fallbacks.Add(1)
	return r.local.Take(ctx, key, rate.share(r.o.Nodes()), maxWait)
}

// Block implements Upstream. The window is also kept here, so that it is honoured if
// Redis goes away before it ends.
func (r *Redis) Block(ctx context.Context, key string, wait time.Duration) {
	if wait <= 0 {
		return
	}
	r.local.Block(ctx, key, wait)
	if !r.usable() {
		return
	}
	ctx, cancel := r.round(ctx)
	defer cancel()
	if err := blockScript.Run(ctx, r.client, r.keys(key)[1:], wait.Microseconds()).Err(); err != nil {
		r.failed("record an upstream's rate-limit window", err)
		return
	}
	r.up()
}

// Forget implements Upstream.
func (r *Redis) Forget(ctx context.Context, key string) {
	r.local.Forget(ctx, key)
	if !r.usable() {
		return
	}
	ctx, cancel := r.round(ctx)
	defer cancel()
	if err := r.client.Del(ctx, r.keys(key)...).Err(); err != nil {
		r.failed("forget a connection's rate limit", err)
	}
}

// round is the context of one round trip: the caller's, bounded by the timeout, and
// not canceled with the caller's (a decision half taken is still recorded).
func (r *Redis) round(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), r.o.Timeout)
}

// usable reports whether Redis is to be tried: it is not within RetryAfter of a failure.
func (r *Redis) usable() bool {
	return time.Now().UnixNano() >= r.retryAt.Load()
}

// failed puts the limits on this node's share for RetryAfter, and logs the first
// failure of an outage.
func (r *Redis) failed(what string, err error) {
	r.retryAt.Store(time.Now().Add(r.o.RetryAfter).UnixNano())
	if r.down.Swap(true) {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	r.o.Logger.Warn("redis is unreachable: rate limits and run bounds fall back to this node's share until it answers",
		"doing", what, "nodes", r.o.Nodes(), "err", err)
}

// up notes that Redis answered, and logs the end of an outage.
func (r *Redis) up() {
	if !r.down.Swap(false) {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	r.o.Logger.Info("redis answers again: rate limits and run bounds are shared by the fleet")
}
