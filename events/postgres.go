package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresOptions configures a PostgreSQL bus.
type PostgresOptions struct {
	// DSN is the database URL the listener connects with (its own connection, outside
	// any pool, since LISTEN belongs to a session).
	DSN string
	// DB publishes (pg_notify), through the hub's pool.
	DB *sql.DB
	// Node is this node's id; "" picks a random one.
	Node string
	// Logger reports disconnections; default slog.Default().
	Logger *slog.Logger
	// Ping is how long the listener waits in silence before it checks its connection
	// (a half-open TCP connection otherwise goes unnoticed); default 15 s.
	Ping time.Duration
	// MaxBackoff bounds the wait between reconnection attempts; default 5 s.
	MaxBackoff time.Duration
}

// Postgres is the fleet's bus: events travel through PostgreSQL's LISTEN/NOTIFY on a
// channel named after the database schema, so fleets sharing one server in different
// schemas do not hear each other.
type Postgres struct {
	subs    subscribers
	db      *sql.DB
	dsn     string
	channel string
	opts    PostgresOptions
	log     *slog.Logger

	cancel    context.CancelFunc
	done      chan struct{}
	connected atomic.Bool
	closeOnce sync.Once
}

var _ Bus = (*Postgres)(nil)

// ApplicationName is the application_name of the listener's connection, as
// pg_stat_activity shows it: "switchboard-events <node>".
func ApplicationName(node string) string { return "switchboard-events " + node }

// NewPostgres connects the listener and returns the bus; Close stops it. The first
// connection must succeed; later ones are retried for as long as the bus lives, and
// every reconnection delivers a Gap.
func NewPostgres(ctx context.Context, o PostgresOptions) (*Postgres, error) {
	if o.DB == nil || o.DSN == "" {
		return nil, errors.New("events: a PostgreSQL bus needs both DB and DSN")
	}
	if o.Node == "" {
		o.Node = NewNodeID()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Ping <= 0 {
		o.Ping = 15 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	var schema string
	if err := o.DB.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return nil, fmt.Errorf("events: read the schema: %w", err)
	}
	p := &Postgres{
		subs: subscribers{node: o.Node}, db: o.DB, dsn: o.DSN, opts: o, log: o.Logger,
		channel: channelFor(schema), done: make(chan struct{}),
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go p.listen(runCtx, conn)
	return p, nil
}

// channelFor names the channel of a schema, within PostgreSQL's 63-byte identifiers.
func channelFor(schema string) string {
	ch := "switchboard_events_" + strings.ToLower(schema)
	if len(ch) > 63 {
		ch = ch[:63]
	}
	return ch
}

// Publish delivers e to this node's subscribers, then notifies the other nodes.
func (p *Postgres) Publish(ctx context.Context, e Event) error {
	e.Origin = p.subs.node
	b, err := encode(e)
	if err != nil {
		return err
	}
	p.subs.deliver(e)
	if e.To == p.subs.node {
		return nil
	}
	if _, err := p.db.ExecContext(ctx, "SELECT pg_notify($1, $2)", p.channel, string(b)); err != nil {
		return fmt.Errorf("events: notify %s: %w", e.Kind, err)
	}
	return nil
}

// Subscribe calls fn for every event delivered on this node.
func (p *Postgres) Subscribe(fn func(Event)) func() { return p.subs.subscribe(fn) }

// Node is this node's id.
func (p *Postgres) Node() string { return p.subs.node }

// Connected reports whether the listener is connected now (for readiness).
func (p *Postgres) Connected() bool { return p.connected.Load() }

// Close stops the listener and waits for it.
func (p *Postgres) Close() {
	p.closeOnce.Do(func() {
		p.cancel()
		<-p.done
	})
}

// connect opens the listener's connection and listens on the channel.
func (p *Postgres) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(p.dsn)
	if err != nil {
		return nil, fmt.Errorf("events: parse the database URL: %w", err)
	}
	cfg.RuntimeParams["application_name"] = ApplicationName(p.subs.node)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("events: connect the listener: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{p.channel}.Sanitize()); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("events: listen: %w", err)
	}
	p.connected.Store(true)
	return conn, nil
}

// listen delivers notifications until ctx ends, reconnecting whenever the connection
// fails.
func (p *Postgres) listen(ctx context.Context, conn *pgx.Conn) {
	defer close(p.done)
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	for {
		err := p.receive(ctx, conn)
		if ctx.Err() != nil {
			return
		}
		p.connected.Store(false)
		p.log.Warn("change feed listener disconnected; reconnecting", "err", err)
		closeConn(conn)
		conn = p.reconnect(ctx)
		if conn == nil {
			return
		}
		p.log.Info("change feed listener reconnected; dropping every cache")
		p.subs.deliver(Event{Kind: Gap, Origin: p.subs.node})
	}
}

// receive delivers notifications from conn until it fails; a silence longer than Ping
// is checked with a query.
func (p *Postgres) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		waitCtx, cancel := context.WithTimeout(ctx, p.opts.Ping)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed() {
				return err
			}
			pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
			err = conn.Ping(pingCtx)
			cancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
			continue
		}
		var e Event
		if err := json.Unmarshal([]byte(n.Payload), &e); err != nil || e.Kind == "" || e.Kind == Gap {
			p.log.Warn("change feed: ignored a malformed notification", "channel", n.Channel)
			continue
		}
		if e.Origin == p.subs.node {
			continue // delivered here when it was published
		}
		p.subs.deliver(e)
	}
}

// pingTimeout bounds the check of a silent listener's connection: long enough for a
// busy server, short enough that a dead connection is replaced soon.
const pingTimeout = 10 * time.Second

// closeConn closes the listener's connection, bounded in time (a server that does not
// answer must not hold up a shutdown).
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// reconnect retries with a growing wait until it connects or ctx ends (nil then).
func (p *Postgres) reconnect(ctx context.Context) *pgx.Conn {
	wait := 50 * time.Millisecond
	for {
		conn, err := p.connect(ctx)
		if err == nil {
			return conn
		}
		p.log.Warn("change feed listener: reconnection failed", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(wait*2, p.opts.MaxBackoff)
	}
}
