package connections

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/providers"
)

// verifyTimeout bounds the check of a pasted token against its provider.
const verifyTimeout = 30 * time.Second

// ConnectInput is a request to connect a provider account with an API token.
type ConnectInput struct {
	Provider string  `json:"provider"`
	Token    string  `json:"token"`
	Shared   bool    `json:"shared"`
	Label    *string `json:"label,omitempty"` // overrides the account label the provider reports
}

// Service is what the API and the MCP adapter use to manage connections for a
// principal: it checks who may see and change what, verifies tokens with the
// provider, records audit events, and tells subscribers about every change.
type Service struct {
	store *Store
	reg   *providers.Registry
	tr    *providers.Transports
	rec   audit.Recorder

	mu   sync.Mutex
	subs []func(tenant switchboard.TenantID, connectionID string)
	feed events.Bus // set while wiring (SetFeed); nil tells this process only

	oauth  OAuthConfig
	flight singleflight.Group // token refreshes, one per connection at a time
}

// NewService returns a Service.
func NewService(store *Store, reg *providers.Registry, tr *providers.Transports, rec audit.Recorder) *Service {
	return &Service{store: store, reg: reg, tr: tr, rec: rec}
}

// Subscribe registers fn to be called after every change to a connection, made here
// or, with a feed, on any node (the router drops its cached client, the MCP adapter
// refreshes tool lists). After a gap in the feed fn is called with an empty tenant and
// id: anything may have changed, drop everything. Subscribe while wiring; fn must not
// block.
func (s *Service) Subscribe(fn func(tenant switchboard.TenantID, connectionID string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

// SetFeed makes the service publish its changes on the change feed and tell its
// subscribers of every node's changes. Call it once, while wiring.
func (s *Service) SetFeed(b events.Bus) {
	s.feed = b
	b.Subscribe(func(e events.Event) {
		switch {
		case e.Kind == events.Gap, e.Kind == events.KeyringRotated:
			s.tell("", "")
		case e.Kind.Connection():
			s.tell(e.Tenant, e.ID)
		}
	})
}

// notify tells every node of a committed change: through the feed when there is one
// (which tells this process's subscribers too), else this process's subscribers.
func (s *Service) notify(ctx context.Context, kind events.Kind, tenant switchboard.TenantID, connectionID string) {
	if s.feed == nil {
		s.tell(tenant, connectionID)
		return
	}
	events.PublishAfterCommit(ctx, s.feed, s.logger(), events.Event{Kind: kind, Tenant: tenant, ID: connectionID})
}

// tell calls this process's subscribers.
func (s *Service) tell(tenant switchboard.TenantID, connectionID string) {
	s.mu.Lock()
	subs := slices.Clone(s.subs)
	s.mu.Unlock()
	for _, fn := range subs {
		fn(tenant, connectionID)
	}
}

// Connect verifies an API token with its provider and stores it as a connection owned
// by p's user. A token the provider refuses is an invalid "token" error with the
// provider's reason, and nothing is stored.
func (s *Service) Connect(ctx context.Context, p switchboard.Principal, in ConnectInput) (Connection, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can connect an account")
	}
	spec, ok := s.reg.Provider(in.Provider)
	if !ok || !spec.Connectable() {
		// A provider whose tools exist per connection (remote MCP servers) is connected
		// through its own registration, which checks what a token cannot; a
		// connectionless one (workflows) has no connections.
		var names []string
		for _, sp := range s.reg.Providers() {
			if sp.Connectable() {
				names = append(names, sp.Name)
			}
		}
		return Connection{}, switchboard.Invalid("provider", fmt.Sprintf("unknown provider %q; known providers: %s", in.Provider, strings.Join(names, ", ")))
	}
	if !slices.Contains(spec.AuthKinds, providers.AuthAPIKey) {
		return Connection{}, switchboard.Invalid("provider", fmt.Sprintf("%s does not accept API tokens; connect it with OAuth", spec.Name))
	}
	token := strings.TrimSpace(in.Token)
	if token == "" {
		msg := "is required"
		if spec.TokenHelp != "" {
			msg += ": " + spec.TokenHelp
		}
		return Connection{}, switchboard.Invalid("token", msg)
	}
	if spec.CheckToken != nil {
		if err := spec.CheckToken(token); err != nil {
			return Connection{}, err
		}
	}
	var label string
	if in.Label != nil {
		label = strings.TrimSpace(*in.Label)
		if err := s.checkLabel(ctx, p.TenantID, Connection{OwnerUserID: p.UserID, Provider: spec.Name, AccountLabel: label, Shared: in.Shared}); err != nil {
			return Connection{}, err
		}
	}
	acct, err := s.verify(ctx, p.TenantID, spec, token)
	if err != nil {
		s.record(p, audit.KindConnectionCreated, "", switchboard.CodeOf(err), spec.Name)
		return Connection{}, err
	}
	if in.Label == nil {
		label = acct.Label
	}
	c := Connection{
		OwnerUserID:  p.UserID,
		Provider:     spec.Name,
		AuthKind:     providers.AuthAPIKey,
		AccountID:    acct.ID,
		AccountLabel: label,
		Scopes:       scopes(acct.Scopes),
		Meta:         acct.Meta,
		Shared:       in.Shared,
		Status:       StatusActive,
	}
	if in.Label == nil {
		// The account's own name, as the provider gave it, is checked like a chosen one.
		if err := s.checkLabel(ctx, p.TenantID, c); err != nil {
			return Connection{}, err
		}
	}
	if err := s.store.Create(ctx, p.TenantID, &c, Credentials{AccessToken: token, TokenType: "Bearer"}); err != nil {
		return Connection{}, err
	}
	s.record(p, audit.KindConnectionCreated, c.ID, "", spec.Name+" "+c.AccountLabel)
	s.notify(ctx, events.ConnectionStatus, p.TenantID, c.ID)
	return c, nil
}

// verify asks the provider whom the token belongs to.
func (s *Service) verify(ctx context.Context, tenant switchboard.TenantID, spec *providers.Spec, token string) (providers.Account, error) {
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	call := &providers.Call{
		Tenant:  tenant,
		BaseURL: s.reg.BaseURL(spec.Name),
		HTTP:    providers.NewClient(spec, s.tr.For(spec.Name), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}), nil),
	}
	acct, err := spec.Verify(ctx, call)
	if err == nil {
		if acct.ID == "" {
			return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: spec.Name + " did not say whose token this is"}
		}
		return acct, nil
	}
	var ue *providers.UpstreamError
	if errors.As(err, &ue) {
		switch ue.Code {
		case switchboard.CodeReconnect, switchboard.CodeForbidden:
			// The provider refused the credential itself (401 or 403, or the refusal it
			// answers in its body, like Slack's invalid_auth).
			return providers.Account{}, &switchboard.Error{Code: switchboard.CodeInvalid, Field: "token", Message: spec.Title + " refused this token: " + refusal(ue), Err: err}
		case switchboard.CodeRateLimited:
			return providers.Account{}, &switchboard.Error{Code: switchboard.CodeRateLimited, RetryAfter: ue.RetryAfter, Message: spec.Name + " is rate limiting us; try again later", Err: err}
		default:
			return providers.Account{}, s.notChecked(spec, ue)
		}
	}
	var se *switchboard.Error
	if errors.As(err, &se) {
		return providers.Account{}, se
	}
	return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "could not check the token with " + spec.Name + "; try again", Err: err}
}

// notChecked is the error of a verification the provider answered with something
// other than a refusal of the credential (a 404 from a wrong base URL, a 406, a 5xx):
// what it answered, and what to check, which is not the token.
func (s *Service) notChecked(spec *providers.Spec, ue *providers.UpstreamError) error {
	answered := fmt.Sprintf("HTTP %d", ue.Status)
	if text := http.StatusText(ue.Status); text != "" {
		answered += " " + text
	}
	if ue.Reason != "" {
		answered += " (" + ue.Reason + ")"
	}
	base := s.reg.BaseURL(spec.Name)
	check := fmt.Sprintf("check that %s is %s's API (SWITCHBOARD_%s_BASE_URL", base, spec.Title, strings.ToUpper(spec.Name))
	if spec.BaseURLHelp != "" {
		check += "; " + spec.BaseURLHelp
	}
	check += ") and that nothing between Switchboard and it rewrites requests"
	if ue.Status >= 500 {
		check = spec.Title + " failed; try again later, and if it persists " + check
	}
	return &switchboard.Error{Code: switchboard.CodeUpstream, Err: ue, Message: fmt.Sprintf(
		"%s answered %s when Switchboard asked whose token this is, so the token was not checked: %s", spec.Name, answered, check)}
}

// refusal is why a provider refused a token being connected: what it said, without
// the advice providers append after "; " for a connection already made ("reconnect
// the GitHub connection"), which would mislead a person pasting a token for the
// first time; the provider's error code when that is all it said.
func refusal(ue *providers.UpstreamError) string {
	said, _, _ := strings.Cut(ue.Message, "; ")
	if said == "" || strings.Contains(said, "connection") {
		if ue.Reason != "" {
			return ue.Reason
		}
		if said == "" {
			return fmt.Sprintf("it answered HTTP %d", ue.Status)
		}
	}
	return said
}

// Usable lists the connections p may run tools on (see Store.Usable).
func (s *Service) Usable(ctx context.Context, p switchboard.Principal) ([]Connection, error) {
	return s.store.Usable(ctx, p)
}

// Open returns a connection of the tenant with its credentials (see Store.Open).
func (s *Service) Open(ctx context.Context, tenant switchboard.TenantID, id string) (Connection, Credentials, error) {
	return s.store.Open(ctx, tenant, id)
}

// MarkNeedsReconnect records that the provider refused the connection's credentials as
// of version: the status becomes needs_reconnect, an audit event names the principal
// whose call found out, and subscribers are told. If the connection changed since that
// version (someone reconnected it meanwhile), nothing is marked.
func (s *Service) MarkNeedsReconnect(ctx context.Context, p switchboard.Principal, id string, version int64) error {
	c, err := s.store.SetStatus(ctx, p.TenantID, id, version, StatusNeedsReconnect)
	switch switchboard.CodeOf(err) {
	case "":
	case switchboard.CodeConflict, switchboard.CodeNotFound:
		return nil
	default:
		return err
	}
	s.record(p, audit.KindConnectionNeedsReconnect, c.ID, "", c.Provider+" "+c.AccountLabel)
	s.notify(ctx, events.ConnectionStatus, p.TenantID, c.ID)
	return nil
}

// List returns the connections p may see: every one of the tenant for an admin user,
// else the shared ones and p's own.
func (s *Service) List(ctx context.Context, p switchboard.Principal) ([]Connection, error) {
	cs, err := s.store.List(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	out := cs[:0]
	for _, c := range cs {
		if visible(p, &c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// AccountIDs returns the account ids of every connection of p's tenant of the provider,
// whoever owns it: for names that must be unique in the tenant (a remote MCP server's,
// which prefixes its tools). Only the ids: nothing else of another user's connection.
func (s *Service) AccountIDs(ctx context.Context, p switchboard.Principal, provider string) ([]string, error) {
	cs, err := s.store.List(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range cs {
		if c.Provider == provider {
			ids = append(ids, c.AccountID)
		}
	}
	return ids, nil
}

// Get returns a connection p may see; one p may not see is not found.
func (s *Service) Get(ctx context.Context, p switchboard.Principal, id string) (Connection, error) {
	c, err := s.store.Get(ctx, p.TenantID, id)
	if err != nil {
		return Connection{}, err
	}
	if !visible(p, &c) {
		return Connection{}, switchboard.NotFound("connection")
	}
	return c, nil
}

// Delete disconnects a connection (see Disconnect) and reports only whether it was
// removed.
func (s *Service) Delete(ctx context.Context, p switchboard.Principal, id string) error {
	_, err := s.Disconnect(ctx, p, id)
	return err
}

// visible reports whether p may see c.
func visible(p switchboard.Principal, c *Connection) bool {
	if c.TenantID != p.TenantID {
		return false
	}
	if p.IsAdmin() {
		return true
	}
	return c.Shared || c.OwnerUserID == p.UserID
}

// mayManage reports whether p may change or delete c.
func mayManage(p switchboard.Principal, c *Connection) bool {
	if p.Kind != switchboard.PrincipalUser || c.TenantID != p.TenantID {
		return false
	}
	return p.Role.IsAdmin() || c.OwnerUserID == p.UserID
}

func (s *Service) record(p switchboard.Principal, kind audit.Kind, connectionID string, code switchboard.Code, detail string) {
	if s.rec == nil {
		return
	}
	outcome := "ok"
	if code != "" {
		outcome = string(code)
	}
	s.rec.Record(audit.Event{
		TenantID:     p.TenantID,
		Kind:         kind,
		Principal:    p.ID(),
		KeyID:        p.KeyID,
		ConnectionID: connectionID,
		Outcome:      outcome,
		Detail:       detail,
	})
}
