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
)

// operatorOAuthAppRow is a row of operator_oauth_apps: the deployment's OAuth app for a
// provider, set by the operator in the UI. TenantID is always empty: the app is no
// tenant's.
type operatorOAuthAppRow struct {
	ID        string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	Provider  string               `gorm:"size:64;not null"`
	ClientID  string               `gorm:"size:255;not null"`
	Sealed    []byte               `gorm:"not null"`
	KeyID     string               `gorm:"size:128;not null"`
	CreatedAt time.Time            `gorm:"not null"`
	UpdatedAt time.Time            `gorm:"not null"`
}

func (operatorOAuthAppRow) TableName() string { return "operator_oauth_apps" }

// operatorOAuthAppAAD binds a sealed client secret of the deployment's to its provider.
func operatorOAuthAppAAD(provider string) []byte {
	return []byte("switchboard/operator-oauth-app/v1\x00" + provider)
}

// putOperatorOAuthApp stores the deployment's OAuth app for a provider, replacing any
// earlier one; the secret is sealed to the provider.
func (s *Store) putOperatorOAuthApp(ctx context.Context, provider, clientID, secret string) (operatorOAuthAppRow, error) {
	sealed, keyID, err := s.kr.Seal(ctx, []byte(secret), operatorOAuthAppAAD(provider))
	if err != nil {
		return operatorOAuthAppRow{}, switchboard.Internal(fmt.Errorf("seal the deployment's oauth app secret of %s: %w", provider, err))
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := operatorOAuthAppRow{ID: switchboard.NewID("oap"), Provider: provider, ClientID: clientID, Sealed: sealed, KeyID: keyID, CreatedAt: now, UpdatedAt: now}
	err = s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "provider"}},
		DoUpdates: clause.AssignmentColumns([]string{"client_id", "sealed", "key_id", "updated_at"}),
	}).Create(&row).Error
	if err != nil {
		return operatorOAuthAppRow{}, switchboard.Internal(fmt.Errorf("store the deployment's oauth app of %s: %w", provider, err))
	}
	var stored operatorOAuthAppRow
	if err := s.db.WithContext(ctx).Where("provider = ?", provider).Take(&stored).Error; err != nil {
		return operatorOAuthAppRow{}, switchboard.Internal(fmt.Errorf("read the deployment's oauth app of %s: %w", provider, err))
	}
	return stored, nil
}

// operatorOAuthApp returns the deployment's OAuth app the operator set for a provider,
// with its secret opened; ok is false when there is none.
func (s *Store) operatorOAuthApp(ctx context.Context, provider string) (app OAuthApp, ok bool, err error) {
	var row operatorOAuthAppRow
	err = s.db.WithContext(ctx).Where("provider = ?", provider).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return OAuthApp{}, false, nil
	case err != nil:
		return OAuthApp{}, false, switchboard.Internal(fmt.Errorf("read the deployment's oauth app of %s: %w", provider, err))
	}
	secret, err := s.kr.Open(ctx, row.KeyID, row.Sealed, operatorOAuthAppAAD(provider))
	if err != nil {
		return OAuthApp{}, false, &switchboard.Error{Code: switchboard.CodeInternal, Message: "the deployment's OAuth app secret does not open", Err: fmt.Errorf("open the deployment's oauth app of %s: %w", provider, err)}
	}
	defer clear(secret)
	return OAuthApp{ClientID: row.ClientID, ClientSecret: string(secret), Source: OAuthAppOperator}, true, nil
}

// listOperatorOAuthApps returns the deployment's OAuth apps the operator set, by
// provider, without their secrets.
func (s *Store) listOperatorOAuthApps(ctx context.Context) ([]operatorOAuthAppRow, error) {
	var rows []operatorOAuthAppRow
	if err := s.db.WithContext(ctx).Select("id", "provider", "client_id", "created_at", "updated_at").Order("provider").Find(&rows).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list the deployment's oauth apps: %w", err))
	}
	return rows, nil
}

// deleteOperatorOAuthApp removes the deployment's OAuth app the operator set for a
// provider.
func (s *Store) deleteOperatorOAuthApp(ctx context.Context, provider string) error {
	res := s.db.WithContext(ctx).Where("provider = ?", provider).Delete(&operatorOAuthAppRow{})
	if res.Error != nil {
		return switchboard.Internal(fmt.Errorf("delete the deployment's oauth app of %s: %w", provider, res.Error))
	}
	if res.RowsAffected == 0 {
		return switchboard.NotFound("OAuth app")
	}
	return nil
}

// DeploymentOAuthApp is one provider that connects with OAuth, as the operator's
// settings show it: whether the deployment has an app for it and where from. Never the
// secret.
type DeploymentOAuthApp struct {
	Provider string `json:"provider"`
	Title    string `json:"title"`
	// Catalog marks an API of the built-in catalog.
	Catalog bool `json:"catalog"`
	// Source is "environment" (SWITCHBOARD_OAUTH_<PROVIDER>_*, which the UI cannot
	// change), "operator" (set in the UI), or "" when the deployment has none.
	Source   OAuthAppSource `json:"source"`
	ClientID string         `json:"client_id,omitempty"`
	// Variable is the environment variable that sets the client ID.
	Variable  string     `json:"variable"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// mayOperate refuses everyone but the deployment's operator.
func mayOperate(p switchboard.Principal) error {
	if p.Kind != switchboard.PrincipalUser || !p.Operator {
		return switchboard.Errorf(switchboard.CodeForbidden, "this needs the deployment's operator (the holder of an operator API key)")
	}
	return nil
}

// DeploymentOAuthApps lists every provider that connects with OAuth through an app,
// the curated ones and the catalog's, with the deployment's app of each (operator
// only).
func (s *Service) DeploymentOAuthApps(ctx context.Context, p switchboard.Principal) ([]DeploymentOAuthApp, error) {
	if err := mayOperate(p); err != nil {
		return nil, err
	}
	rows, err := s.store.listOperatorOAuthApps(ctx)
	if err != nil {
		return nil, err
	}
	set := make(map[string]operatorOAuthAppRow, len(rows))
	for _, r := range rows {
		set[r.Provider] = r
	}
	out := []DeploymentOAuthApp{}
	for _, spec := range s.reg.Providers() {
		if spec.OAuth == nil || spec.ConnectionOAuth != nil {
			continue
		}
		d := DeploymentOAuthApp{Provider: spec.Name, Title: spec.Title, Catalog: spec.Catalog, Variable: oauthEnv(spec.Name, "CLIENT_ID")}
		if env := s.oauth.Apps[spec.Name]; env.ClientID != "" {
			d.Source, d.ClientID = OAuthAppEnvironment, env.ClientID
		} else if r, ok := set[spec.Name]; ok {
			at := r.UpdatedAt
			d.Source, d.ClientID, d.UpdatedAt = OAuthAppOperator, r.ClientID, &at
		}
		out = append(out, d)
	}
	return out, nil
}

// SetDeploymentOAuthApp stores the deployment's OAuth app for a provider (operator
// only): every tenant without its own app connects the provider with it. A provider
// whose app the environment sets is refused: the environment's stays in force.
func (s *Service) SetDeploymentOAuthApp(ctx context.Context, p switchboard.Principal, in OAuthAppInput) (DeploymentOAuthApp, error) {
	if err := mayOperate(p); err != nil {
		return DeploymentOAuthApp{}, err
	}
	spec, err := s.oauthProvider(in.Provider)
	if err != nil {
		return DeploymentOAuthApp{}, err
	}
	if spec.ConnectionOAuth != nil {
		return DeploymentOAuthApp{}, switchboard.Invalid("provider", fmt.Sprintf("%s takes its OAuth app per connection, not the deployment's", spec.Title))
	}
	if env := s.oauth.Apps[spec.Name]; env.ClientID != "" {
		return DeploymentOAuthApp{}, switchboard.Errorf(switchboard.CodeConflict, "the environment sets %s's OAuth app (%s); change it there, or unset it to manage the app here", spec.Title, oauthEnv(spec.Name, "CLIENT_ID"))
	}
	clientID, secret := strings.TrimSpace(in.ClientID), strings.TrimSpace(in.ClientSecret)
	switch {
	case clientID == "" || len(clientID) > 255:
		return DeploymentOAuthApp{}, switchboard.Invalid("client_id", "must be 1 to 255 characters: the OAuth app's client ID")
	case secret == "" || len(secret) > 1024:
		return DeploymentOAuthApp{}, switchboard.Invalid("client_secret", "must be 1 to 1024 characters: the OAuth app's client secret")
	}
	row, err := s.store.putOperatorOAuthApp(ctx, spec.Name, clientID, secret)
	if err != nil {
		return DeploymentOAuthApp{}, err
	}
	s.record(p, audit.KindOAuthAppSet, "", "", "deployment "+spec.Name+" "+clientID)
	at := row.UpdatedAt
	return DeploymentOAuthApp{Provider: spec.Name, Title: spec.Title, Catalog: spec.Catalog, Source: OAuthAppOperator, ClientID: row.ClientID,
		Variable: oauthEnv(spec.Name, "CLIENT_ID"), UpdatedAt: &at}, nil
}

// DeleteDeploymentOAuthApp removes the deployment's OAuth app the operator set for a
// provider (operator only). Connections it made keep working until their token needs
// a refresh.
func (s *Service) DeleteDeploymentOAuthApp(ctx context.Context, p switchboard.Principal, provider string) error {
	if err := mayOperate(p); err != nil {
		return err
	}
	if err := s.store.deleteOperatorOAuthApp(ctx, provider); err != nil {
		return err
	}
	s.record(p, audit.KindOAuthAppDeleted, "", "", "deployment "+provider)
	return nil
}
