package connections

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/providers"
)

// OAuthApp is an OAuth app's client credentials for one provider: the deployment's,
// from configuration or set by the operator, or a tenant's own; the secrets of the
// last two are sealed in the database.
type OAuthApp struct {
	ClientID     string
	ClientSecret string
	// AuthURL and TokenURL override the provider's endpoints (GitHub Enterprise Server,
	// a test's authorization server); "" keeps the Spec's.
	AuthURL  string
	TokenURL string
	// Source says whose app it is; "" in configuration is OAuthAppEnvironment.
	Source OAuthAppSource
}

// OAuthAppSource says where an OAuth app comes from.
type OAuthAppSource string

// The places an OAuth app comes from, in the order a tenant's connection takes them.
const (
	// OAuthAppTenant is the tenant's own app, set by a tenant admin.
	OAuthAppTenant OAuthAppSource = "tenant"
	// OAuthAppEnvironment is the deployment's, from SWITCHBOARD_OAUTH_<PROVIDER>_*.
	OAuthAppEnvironment OAuthAppSource = "environment"
	// OAuthAppOperator is the deployment's, set by the operator in the UI.
	OAuthAppOperator OAuthAppSource = "operator"
)

// shared says the app is kept in the database, which every node reads alike, rather
// than in one node's configuration.
func (a OAuthApp) shared() bool { return a.Source == OAuthAppTenant || a.Source == OAuthAppOperator }

// OAuthAppInfo is a tenant's OAuth app as the API shows it: never the secret.
type OAuthAppInfo struct {
	Provider  string    `json:"provider"`
	ClientID  string    `json:"client_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// oauthAppRow is a row of oauth_apps.
type oauthAppRow struct {
	ID        string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	Provider  string               `gorm:"size:64;not null"`
	ClientID  string               `gorm:"size:255;not null"`
	Sealed    []byte               `gorm:"not null"`
	KeyID     string               `gorm:"size:128;not null"`
	CreatedAt time.Time            `gorm:"not null"`
	UpdatedAt time.Time            `gorm:"not null"`
}

func (oauthAppRow) TableName() string { return "oauth_apps" }

func (r *oauthAppRow) info() OAuthAppInfo {
	return OAuthAppInfo{Provider: r.Provider, ClientID: r.ClientID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// oauthAppAAD binds a sealed client secret to its tenant and provider.
func oauthAppAAD(tenant switchboard.TenantID, provider string) []byte {
	return []byte("switchboard/oauth-app/v1\x00" + string(tenant) + "\x00" + provider)
}

// PutOAuthApp stores the tenant's own OAuth app for a provider, replacing any earlier
// one; the secret is sealed to the tenant and provider.
func (s *Store) PutOAuthApp(ctx context.Context, tenant switchboard.TenantID, provider, clientID, secret string) (OAuthAppInfo, error) {
	sealed, keyID, err := s.kr.Seal(ctx, []byte(secret), oauthAppAAD(tenant, provider))
	if err != nil {
		return OAuthAppInfo{}, switchboard.Internal(fmt.Errorf("seal oauth app secret of %s: %w", provider, err))
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := oauthAppRow{ID: switchboard.NewID("oap"), TenantID: tenant, Provider: provider, ClientID: clientID, Sealed: sealed, KeyID: keyID, CreatedAt: now, UpdatedAt: now}
	err = s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "provider"}},
		DoUpdates: clause.AssignmentColumns([]string{"client_id", "sealed", "key_id", "updated_at"}),
	}).Create(&row).Error
	if err != nil {
		if errors.Is(err, gorm.ErrForeignKeyViolated) {
			return OAuthAppInfo{}, switchboard.NotFound("tenant")
		}
		return OAuthAppInfo{}, switchboard.Internal(fmt.Errorf("store oauth app of %s: %w", provider, err))
	}
	var stored oauthAppRow
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND provider = ?", tenant, provider).Take(&stored).Error; err != nil {
		return OAuthAppInfo{}, switchboard.Internal(fmt.Errorf("read oauth app of %s: %w", provider, err))
	}
	return stored.info(), nil
}

// OAuthApp returns the tenant's own OAuth app for a provider, with its secret opened;
// ok is false when the tenant has none.
func (s *Store) OAuthApp(ctx context.Context, tenant switchboard.TenantID, provider string) (app OAuthApp, ok bool, err error) {
	var row oauthAppRow
	err = s.db.WithContext(ctx).Where("tenant_id = ? AND provider = ?", tenant, provider).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return OAuthApp{}, false, nil
	case err != nil:
		return OAuthApp{}, false, switchboard.Internal(fmt.Errorf("read oauth app of %s: %w", provider, err))
	}
	secret, err := s.kr.Open(ctx, row.KeyID, row.Sealed, oauthAppAAD(tenant, provider))
	if err != nil {
		return OAuthApp{}, false, &switchboard.Error{Code: switchboard.CodeInternal, Message: "the OAuth app's secret does not open", Err: fmt.Errorf("open oauth app of %s: %w", provider, err)}
	}
	defer clear(secret)
	return OAuthApp{ClientID: row.ClientID, ClientSecret: string(secret), Source: OAuthAppTenant}, true, nil
}

// ListOAuthApps returns the tenant's own OAuth apps, by provider.
func (s *Store) ListOAuthApps(ctx context.Context, tenant switchboard.TenantID) ([]OAuthAppInfo, error) {
	var rows []oauthAppRow
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Order("provider").Find(&rows).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list oauth apps: %w", err))
	}
	out := make([]OAuthAppInfo, 0, len(rows))
	for i := range rows {
		out = append(out, rows[i].info())
	}
	return out, nil
}

// DeleteOAuthApp removes the tenant's own OAuth app for a provider.
func (s *Store) DeleteOAuthApp(ctx context.Context, tenant switchboard.TenantID, provider string) error {
	res := s.db.WithContext(ctx).Where("tenant_id = ? AND provider = ?", tenant, provider).Delete(&oauthAppRow{})
	if res.Error != nil {
		return switchboard.Internal(fmt.Errorf("delete oauth app of %s: %w", provider, res.Error))
	}
	if res.RowsAffected == 0 {
		return switchboard.NotFound("oauth app")
	}
	return nil
}

// OAuthAppInput is a tenant's own OAuth app for a provider.
type OAuthAppInput struct {
	Provider     string
	ClientID     string
	ClientSecret string
}

// SetOAuthApp stores the tenant's own OAuth app for a provider (tenant admins only);
// it takes precedence over the deployment's for the tenant's new connections.
func (s *Service) SetOAuthApp(ctx context.Context, p switchboard.Principal, in OAuthAppInput) (OAuthAppInfo, error) {
	if err := mayAdminister(p); err != nil {
		return OAuthAppInfo{}, err
	}
	spec, err := s.oauthProvider(in.Provider)
	if err != nil {
		return OAuthAppInfo{}, err
	}
	clientID, secret := strings.TrimSpace(in.ClientID), strings.TrimSpace(in.ClientSecret)
	switch {
	case clientID == "" || len(clientID) > 255:
		return OAuthAppInfo{}, switchboard.Invalid("client_id", "must be 1 to 255 characters: the OAuth app's client ID")
	case secret == "" || len(secret) > 1024:
		return OAuthAppInfo{}, switchboard.Invalid("client_secret", "must be 1 to 1024 characters: the OAuth app's client secret")
	}
	info, err := s.store.PutOAuthApp(ctx, p.TenantID, spec.Name, clientID, secret)
	if err != nil {
		return OAuthAppInfo{}, err
	}
	s.record(p, audit.KindOAuthAppSet, "", "", spec.Name+" "+clientID)
	return info, nil
}

// ListOAuthApps lists the tenant's own OAuth apps (tenant admins only).
func (s *Service) ListOAuthApps(ctx context.Context, p switchboard.Principal) ([]OAuthAppInfo, error) {
	if err := mayAdminister(p); err != nil {
		return nil, err
	}
	return s.store.ListOAuthApps(ctx, p.TenantID)
}

// DeleteOAuthApp removes the tenant's own OAuth app for a provider (tenant admins
// only); the deployment's app, if any, serves the tenant again.
func (s *Service) DeleteOAuthApp(ctx context.Context, p switchboard.Principal, provider string) error {
	if err := mayAdminister(p); err != nil {
		return err
	}
	if err := s.store.DeleteOAuthApp(ctx, p.TenantID, provider); err != nil {
		return err
	}
	s.record(p, audit.KindOAuthAppDeleted, "", "", provider)
	return nil
}

// OAuthReady reports, for each provider with an OAuth flow, whether the tenant can
// connect it with OAuth now: the tenant has its own app for it, or the deployment has
// one (configured, or set by the operator), and the hub has a redirect URL. The UI
// offers "Continue with OAuth" only then.
func (s *Service) OAuthReady(ctx context.Context, tenant switchboard.TenantID) (map[string]bool, error) {
	apps, err := s.store.ListOAuthApps(ctx, tenant)
	if err != nil {
		return nil, err
	}
	ops, err := s.store.listOperatorOAuthApps(ctx)
	if err != nil {
		return nil, err
	}
	own := make(map[string]bool, len(apps)+len(ops))
	for _, a := range apps {
		own[a.Provider] = true
	}
	for _, a := range ops {
		own[a.Provider] = true
	}
	out := map[string]bool{}
	for _, spec := range s.reg.Providers() {
		if spec.OAuth != nil {
			out[spec.Name] = s.oauth.RedirectURL != "" && (own[spec.Name] || s.oauth.Apps[spec.Name].ClientID != "")
		}
	}
	return out, nil
}

// OAuthAppFor returns the OAuth app a member of tenant connects provider with: the
// tenant's own if it has one, else the deployment's (from the environment, else the
// one the operator set in the UI), with the deployment's endpoint overrides applied.
// When there is none it answers an invalid error that says who can add one and where.
func (s *Service) OAuthAppFor(ctx context.Context, tenant switchboard.TenantID, provider string) (OAuthApp, error) {
	spec, err := s.oauthProvider(provider)
	if err != nil {
		return OAuthApp{}, err
	}
	app, endpoints, err := s.oauthApp(ctx, tenant, spec)
	if err != nil {
		return OAuthApp{}, err
	}
	app.AuthURL, app.TokenURL = endpoints.AuthURL, endpoints.TokenURL
	return app, nil
}

// oauthApp resolves the OAuth app a tenant connects a provider with: the tenant's own
// if it has one, else the deployment's, from the environment or else set by the
// operator; the environment's endpoint overrides apply to all of them.
func (s *Service) oauthApp(ctx context.Context, tenant switchboard.TenantID, spec *providers.Spec) (OAuthApp, providers.OAuth2, error) {
	endpoints := *spec.OAuth
	dep, hasDep := s.oauth.Apps[spec.Name]
	if dep.AuthURL != "" {
		endpoints.AuthURL = dep.AuthURL
	}
	if dep.TokenURL != "" {
		endpoints.TokenURL = dep.TokenURL
	}
	app, ok, err := s.store.OAuthApp(ctx, tenant, spec.Name)
	if err != nil {
		return OAuthApp{}, endpoints, err
	}
	if ok {
		return app, endpoints, nil
	}
	if hasDep && dep.ClientID != "" {
		dep.Source = OAuthAppEnvironment
		return dep, endpoints, nil
	}
	op, ok, err := s.store.operatorOAuthApp(ctx, spec.Name)
	if err != nil {
		return OAuthApp{}, endpoints, err
	}
	if ok {
		return op, endpoints, nil
	}
	return OAuthApp{}, endpoints, noOAuthApp(spec)
}

// noOAuthApp is the refusal of a connection with OAuth when neither the tenant nor the
// deployment has an app for the provider: who can add one, and where.
func noOAuthApp(spec *providers.Spec) error {
	return switchboard.Invalid("provider", fmt.Sprintf("no OAuth app is configured for %s: ask your operator to set %s and %s (or to add the deployment's app in Settings → Deployment OAuth apps), or a workspace admin adds the workspace's own app in Settings → OAuth apps (PUT /api/oauth-apps/%s)",
		spec.Title, oauthEnv(spec.Name, "CLIENT_ID"), oauthEnv(spec.Name, "CLIENT_SECRET"), spec.Name))
}

// oauthEnv is the name of one of the environment variables of a provider's deployment
// OAuth app: SWITCHBOARD_OAUTH_GMAIL_CLIENT_ID.
func oauthEnv(provider, what string) string {
	return "SWITCHBOARD_OAUTH_" + strings.ToUpper(provider) + "_" + what
}

// oauthProvider returns a provider that supports the OAuth connect flow.
func (s *Service) oauthProvider(name string) (*providers.Spec, error) {
	spec, ok := s.reg.Provider(name)
	if !ok {
		var names []string
		for _, sp := range s.reg.Providers() {
			if sp.OAuth != nil {
				names = append(names, sp.Name)
			}
		}
		return nil, switchboard.Invalid("provider", fmt.Sprintf("unknown provider %q; providers with OAuth: %s", name, strings.Join(names, ", ")))
	}
	if spec.OAuth == nil {
		return nil, switchboard.Invalid("provider", fmt.Sprintf("%s does not support OAuth; connect it with an API token", spec.Title))
	}
	return spec, nil
}

// mayAdminister refuses principals other than the tenant's admin users.
func mayAdminister(p switchboard.Principal) error {
	if !p.IsAdmin() {
		return switchboard.Errorf(switchboard.CodeForbidden, "this needs an admin of the workspace (role owner or admin)")
	}
	return nil
}
