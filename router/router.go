// Package router is the ExecutionRouter: it takes a principal and a tool call, checks
// that the connection belongs to the principal's tenant and that the principal may use
// it, opens the credentials, takes the connection's pooled client, runs the operation
// and leaves an audit record.
package router

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// Connections is what the router needs of the connection store.
type Connections interface {
	// Usable lists the connections of p's tenant that p may use.
	Usable(ctx context.Context, p switchboard.Principal) ([]connections.Connection, error)
	// Open returns a connection of the tenant with its credentials unsealed.
	Open(ctx context.Context, tenant switchboard.TenantID, id string) (connections.Connection, connections.Credentials, error)
	// MarkNeedsReconnect records that the provider refused the connection's credentials
	// (as of the given version), on behalf of the principal whose call found out.
	MarkNeedsReconnect(ctx context.Context, p switchboard.Principal, id string, version int64) error
}

// saturated is implemented by audit recorders that can say they are not keeping up
// (the database is slow or down), so calls are refused instead of hanging.
type saturated interface {
	Saturated() bool
}

// Router runs tool calls. It is safe for concurrent use.
type Router struct {
	registry *providers.Registry
	conns    Connections
	audit    audit.Recorder
	pool     *pool
	log      *slog.Logger
	argsKey  []byte
	now      func() time.Time
	dynamic  DynamicTools
}

// Options configure a Router.
type Options struct {
	Registry    *providers.Registry
	Connections Connections
	Audit       audit.Recorder
	Transports  *providers.Transports
	Logger      *slog.Logger
	// ClientTTL bounds how long a connection's cached client and record are trusted
	// before they are re-read (another node may have changed the connection).
	ClientTTL time.Duration
	// ArgsKey keys the HMAC-SHA-256 of a call's arguments in its audit record, so short
	// arguments cannot be guessed from the log. Derive it from the deployment's secret.
	ArgsKey []byte
	// Dynamic, when set, supplies the tools of connections outside the registry
	// (remote MCP servers).
	Dynamic DynamicTools
}

// New returns a Router.
func New(o Options) *Router {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Transports == nil {
		o.Transports = &providers.Transports{}
	}
	if o.ClientTTL <= 0 {
		o.ClientTTL = 30 * time.Second
	}
	r := &Router{
		registry: o.Registry,
		conns:    o.Connections,
		audit:    o.Audit,
		pool:     newPool(o.Registry, o.Connections, o.Transports, o.ClientTTL),
		log:      o.Logger,
		argsKey:  o.ArgsKey,
		now:      time.Now,
		dynamic:  o.Dynamic,
	}
	if o.Dynamic != nil {
		r.pool.dynamic = o.Dynamic.Provider()
	}
	return r
}

// Request is one tool call.
type Request struct {
	Tool         string          // {provider}_{operation}
	ConnectionID string          // the connection to run it on
	Args         json.RawMessage // the arguments, validated against the tool's input schema first
}

// Execute runs a tool call for the principal. Errors are *switchboard.Error or
// *providers.UpstreamError (see switchboard.CodeOf); internal failures are logged
// here with detail and returned with a generic message.
func (r *Router) Execute(ctx context.Context, p switchboard.Principal, req Request) (out any, err error) {
	if s, ok := r.audit.(saturated); ok && s.Saturated() {
		// Nothing runs that could not be audited; the refusal itself is not queued.
		return nil, &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "the audit log is not keeping up, so nothing was run; retry in a few seconds"}
	}
	start := r.now()
	status := &upstreamStatus{}
	defer func() {
		r.record(p, req, start, int(status.code.Load()), err)
	}()
	tool, ok := r.registry.Tool(req.Tool)
	if !ok && r.dynamic == nil {
		return nil, switchboard.NotFound("tool " + req.Tool)
	}
	if ok {
		if err := tool.Validate(req.Args); err != nil {
			return nil, err
		}
	}
	if req.ConnectionID == "" {
		return nil, switchboard.Invalid("connection", "is required")
	}
	entry, err := r.pool.get(ctx, p.TenantID, req.ConnectionID)
	if err != nil {
		if !ok && switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return nil, switchboard.NotFound("tool " + req.Tool)
		}
		return nil, r.internal(err, "open connection %s", req.ConnectionID)
	}
	conn := &entry.conn
	if !conn.UsableBy(p) {
		// The same answer as for a connection that does not exist: nothing leaks.
		if !ok {
			return nil, switchboard.NotFound("tool " + req.Tool)
		}
		return nil, switchboard.NotFound("connection")
	}
	if !ok {
		// Not a registry tool: one the connection brings itself, if it is dynamic.
		if !r.isDynamic(conn) {
			return nil, switchboard.NotFound("tool " + req.Tool)
		}
		if conn.Status == connections.StatusNeedsReconnect || conn.Status == connections.StatusRevoked {
			return nil, &switchboard.Error{Code: switchboard.CodeReconnect, Message: fmt.Sprintf("the remote MCP server %q needs to be reconnected before it can be used", conn.AccountLabel)}
		}
		if tool, err = r.dynamicTool(ctx, *conn, req.Tool); err != nil {
			return nil, r.internal(err, "list tools of connection %s", conn.ID)
		}
		if tool == nil {
			return nil, switchboard.NotFound("tool " + req.Tool)
		}
		if err := tool.Validate(req.Args); err != nil {
			return nil, err
		}
		if err := entry.lim.Wait(ctx); err != nil {
			return nil, err
		}
	}
	if conn.Provider != tool.Provider.Name {
		return nil, switchboard.Invalid("connection", fmt.Sprintf("is a %s connection; %s needs a %s connection", conn.Provider, tool.Name, tool.Provider.Name))
	}
	if conn.Status == connections.StatusNeedsReconnect || conn.Status == connections.StatusRevoked {
		return nil, &switchboard.Error{Code: switchboard.CodeReconnect, Message: fmt.Sprintf("the %s connection %q needs to be reconnected before it can be used", tool.Provider.Title, conn.AccountLabel)}
	}
	call := &providers.Call{Tenant: p.TenantID, ConnectionID: conn.ID, BaseURL: r.registry.BaseURL(conn.Provider), HTTP: entry.client, Meta: conn.Meta}
	out, err = tool.Op.Invoke(withStatus(ctx, status), call, req.Args)
	if err != nil {
		var ue *providers.UpstreamError
		if errors.As(err, &ue) {
			if ue.Code == switchboard.CodeReconnect {
				r.needsReconnect(ctx, p, conn)
			}
			return nil, ue // without the transport's wrapping, which repeats the URL
		}
		var se *switchboard.Error
		if errors.As(err, &se) && se.Code != switchboard.CodeInternal {
			// The token source failed with a reason of its own (a refresh token the
			// provider refused, which marked the connection already; a token endpoint
			// that rate limits): more use to the caller than "could not reach".
			if se.Code == switchboard.CodeReconnect {
				r.pool.forget(conn.ID)
			}
			return nil, se
		}
		var netErr *url.Error
		if errors.As(err, &netErr) && ctx.Err() == nil {
			return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not reach %s: %v; retrying later may help", tool.Provider.Title, netErr.Err), Err: err}
		}
		return nil, r.internal(err, "run %s", tool.Name)
	}
	return out, nil
}

// internal logs and hides an error that carries no code; coded errors pass through.
func (r *Router) internal(err error, format string, args ...any) error {
	if switchboard.CodeOf(err) != switchboard.CodeInternal {
		return err
	}
	var e *switchboard.Error
	if errors.As(err, &e) && e.Err == nil {
		return err
	}
	r.log.Error(fmt.Sprintf(format, args...), "err", err)
	return switchboard.Internal(err)
}

func (r *Router) record(p switchboard.Principal, req Request, start time.Time, upstream int, err error) {
	if r.audit == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = string(switchboard.CodeOf(err))
		var ue *providers.UpstreamError
		if errors.As(err, &ue) && upstream == 0 {
			upstream = ue.Status
		}
	}
	mac := hmac.New(sha256.New, r.argsKey)
	mac.Write(req.Args)
	r.audit.Record(audit.Event{
		TenantID:       p.TenantID,
		At:             start,
		Kind:           audit.KindToolCall,
		Principal:      p.ID(),
		KeyID:          p.KeyID,
		Tool:           req.Tool,
		ConnectionID:   req.ConnectionID,
		Outcome:        outcome,
		UpstreamStatus: upstream,
		LatencyMicros:  r.now().Sub(start).Microseconds(),
		ArgsHash:       hex.EncodeToString(mac.Sum(nil)),
	})
}

// needsReconnect marks a connection whose credentials the provider refused, so its
// status says so and later calls fail without reaching the provider.
func (r *Router) needsReconnect(ctx context.Context, p switchboard.Principal, c *connections.Connection) {
	r.pool.forget(c.ID)
	if err := r.conns.MarkNeedsReconnect(context.WithoutCancel(ctx), p, c.ID, c.Version); err != nil {
		r.log.Error("mark connection needs_reconnect", "connection", c.ID, "err", err)
	}
}

// Forget drops the cached client of a connection; wire it to connection changes.
func (r *Router) Forget(_ switchboard.TenantID, connectionID string) { r.pool.forget(connectionID) }
