package identity

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/keyring"
)

// maxSSODomains bounds a tenant's allowed email domains.
const maxSSODomains = 100

// ssoConfig is a row of sso_configs: a tenant's OpenID provider, the client
// Switchboard is there (the secret sealed, bound to the tenant), the email domains
// whose people join on their first sign-in, and whether passwords are off.
type ssoConfig struct {
	ID             string               `gorm:"primaryKey;size:40"`
	TenantID       switchboard.TenantID `gorm:"size:40;not null"`
	Issuer         string               `gorm:"size:2048;not null"`
	ClientID       string               `gorm:"size:255;not null"`
	Sealed         []byte               `gorm:"not null"`
	KeyID          string               `gorm:"size:128;not null"`
	AllowedDomains string               `gorm:"type:text;not null"`
	PasswordsOff   bool                 `gorm:"not null"`
	CreatedAt      time.Time            `gorm:"not null"`
	UpdatedAt      time.Time            `gorm:"not null"`
}

func (ssoConfig) TableName() string { return "sso_configs" }

func (c *ssoConfig) domains() []string { return strings.Fields(c.AllowedDomains) }

// ssoSecretAAD binds a sealed client secret to its tenant.
func ssoSecretAAD(tenant switchboard.TenantID) []byte {
	return []byte("switchboard/sso-client-secret/v1\x00" + string(tenant))
}

// SSOSettings is a tenant's single sign-on as the API shows it: never the client
// secret, only whether one is set.
type SSOSettings struct {
	// Configured says the tenant has single sign-on; the fields below it are empty
	// otherwise, except the two URLs an admin needs to set it up.
	Configured        bool       `json:"configured"`
	Issuer            string     `json:"issuer,omitempty"`
	ClientID          string     `json:"client_id,omitempty"`
	ClientSecretSet   bool       `json:"client_secret_set"`
	AllowedDomains    []string   `json:"allowed_domains"`
	LocalPasswordsOff bool       `json:"local_passwords_off"`
	UpdatedAt         *time.Time `json:"updated_at,omitempty"`
	// RedirectURI is what to register at the identity provider; SignInURL is the
	// workspace's sign-in page, which shows the single sign-on button.
	RedirectURI string `json:"redirect_uri"`
	SignInURL   string `json:"sign_in_url"`
}

// SSOInput is what an owner sets. An empty ClientSecret keeps the stored one.
type SSOInput struct {
	Issuer            string
	ClientID          string
	ClientSecret      string
	AllowedDomains    []string
	LocalPasswordsOff bool
}

func (s *Server) settingsOf(slug string, c *ssoConfig) SSOSettings {
	out := SSOSettings{AllowedDomains: []string{}, RedirectURI: s.o.PublicURL + SSOCallbackPath,
		SignInURL: s.o.PublicURL + "/signin?workspace=" + url.QueryEscape(slug)}
	if c == nil {
		return out
	}
	at := c.UpdatedAt
	out.Configured, out.Issuer, out.ClientID, out.ClientSecretSet = true, c.Issuer, c.ClientID, len(c.Sealed) > 0
	out.AllowedDomains, out.LocalPasswordsOff, out.UpdatedAt = c.domains(), c.PasswordsOff, &at
	return out
}

// ssoConfigOf returns the tenant's single sign-on, or nil when it has none.
func (s *Server) ssoConfigOf(ctx context.Context, tenant switchboard.TenantID) (*ssoConfig, error) {
	var c ssoConfig
	err := s.o.DB.WithContext(ctx).Where("tenant_id = ?", tenant).Take(&c).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil, nil
	case err != nil:
		return nil, switchboard.Internal(fmt.Errorf("read single sign-on of tenant %s: %w", tenant, err))
	}
	return &c, nil
}

// SSO returns the tenant's single sign-on settings (tenant owners only: whoever sets
// the identity provider decides who it signs in).
func (s *Server) SSO(ctx context.Context, p switchboard.Principal) (SSOSettings, error) {
	if err := mayOwnSSO(p); err != nil {
		return SSOSettings{}, err
	}
	c, err := s.ssoConfigOf(ctx, p.TenantID)
	if err != nil {
		return SSOSettings{}, err
	}
	return s.settingsOf(p.TenantSlug, c), nil
}

var domainPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$`)

// checkIssuer says what is wrong with an issuer URL: https (http only on a loopback
// host, for a provider on this machine), no query or fragment.
func checkIssuer(raw string) string {
	const want = "must be the identity provider's issuer URL, such as https://accounts.google.com (https, no query or fragment, at most 2000 characters)"
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || len(raw) > 2000 {
		return want
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
			return ""
		}
	}
	return want
}

// normalizeDomains lower-cases, checks and de-duplicates email domains ("@" allowed
// before each).
func normalizeDomains(in []string) ([]string, error) {
	out := []string{}
	for i, d := range in {
		d = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "@")
		if !domainPattern.MatchString(d) || len(d) > 253 {
			return nil, switchboard.Invalid(fmt.Sprintf("allowed_domains[%d]", i), fmt.Sprintf("%q is not an email domain such as example.com", in[i]))
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > maxSSODomains {
		return nil, switchboard.Invalid("allowed_domains", fmt.Sprintf("must list at most %d domains", maxSSODomains))
	}
	return out, nil
}

// SetSSO sets the tenant's single sign-on (tenant owners only). The issuer must answer
// OpenID discovery now, so a typo is caught here rather than at the next sign-in. The
// client secret is sealed by the keyring; an empty one keeps the stored secret. A new
// issuer removes every link to the former one. The change is audited and kept for
// every owner to acknowledge.
func (s *Server) SetSSO(ctx context.Context, p switchboard.Principal, in SSOInput) (SSOSettings, error) {
	if err := mayOwnSSO(p); err != nil {
		return SSOSettings{}, err
	}
	issuer, clientID, secret := strings.TrimSpace(in.Issuer), strings.TrimSpace(in.ClientID), strings.TrimSpace(in.ClientSecret)
	if why := checkIssuer(issuer); why != "" {
		return SSOSettings{}, switchboard.Invalid("issuer", why)
	}
	if clientID == "" || len(clientID) > 255 {
		return SSOSettings{}, switchboard.Invalid("client_id", "must be 1 to 255 characters: the client ID the identity provider gave Switchboard")
	}
	if len(secret) > 1024 {
		return SSOSettings{}, switchboard.Invalid("client_secret", "must be at most 1024 characters")
	}
	domains, err := normalizeDomains(in.AllowedDomains)
	if err != nil {
		return SSOSettings{}, err
	}
	old, err := s.ssoConfigOf(ctx, p.TenantID)
	if err != nil {
		return SSOSettings{}, err
	}
	if secret == "" && old == nil {
		return SSOSettings{}, switchboard.Invalid("client_secret", "is required the first time: the client secret the identity provider gave Switchboard")
	}
	if in.LocalPasswordsOff {
		// The owner turning passwords off must still be able to sign in afterwards.
		l, err := s.linkOf(ctx, p.TenantID, p.UserID, issuer)
		if err != nil {
			return SSOSettings{}, err
		}
		if l == nil || l.Pending {
			return SSOSettings{}, switchboard.Invalid("local_passwords_off", "may be turned on only once your own account is linked to this identity provider: save single sign-on with passwords on, choose Link single sign-on, then turn passwords off")
		}
	}
	if _, err := s.discover(ctx, issuer); err != nil {
		s.o.Logger.WarnContext(ctx, "single sign-on: discovery", "tenant", p.TenantID, "err", err)
		var de *discoveryError
		if errors.As(err, &de) {
			return SSOSettings{}, switchboard.Invalid("issuer", de.Public)
		}
		return SSOSettings{}, switchboard.Invalid("issuer", "the issuer's OpenID discovery document could not be fetched")
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	row := ssoConfig{ID: switchboard.NewID("sso"), TenantID: p.TenantID, Issuer: issuer, ClientID: clientID,
		AllowedDomains: strings.Join(domains, " "), PasswordsOff: in.LocalPasswordsOff, CreatedAt: now, UpdatedAt: now}
	update := []string{"issuer", "client_id", "allowed_domains", "passwords_off", "updated_at"}
	if secret != "" {
		sealed, keyID, err := s.o.Keyring.Seal(ctx, []byte(secret), ssoSecretAAD(p.TenantID))
		if err != nil {
			return SSOSettings{}, switchboard.Internal(fmt.Errorf("seal the single sign-on client secret: %w", err))
		}
		row.Sealed, row.KeyID = sealed, keyID
		update = append(update, "sealed", "key_id")
	} else {
		row.Sealed, row.KeyID = old.Sealed, old.KeyID
	}
	detail := describeSSOChange(old, &row, secret != "")
	err = s.o.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "tenant_id"}}, DoUpdates: clause.AssignmentColumns(update),
		}).Create(&row).Error
		if err != nil {
			return err
		}
		if err := unlinkOthers(tx, p.TenantID, issuer); err != nil {
			return err
		}
		return s.noteSSOChange(tx, p, detail)
	})
	if err != nil {
		return SSOSettings{}, switchboard.Internal(fmt.Errorf("store single sign-on of tenant %s: %w", p.TenantID, err))
	}
	stored, err := s.ssoConfigOf(ctx, p.TenantID)
	if err != nil || stored == nil {
		return SSOSettings{}, switchboard.Internal(fmt.Errorf("read back single sign-on of tenant %s: %v", p.TenantID, err))
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindSSOSet, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok", Detail: detail})
	return s.settingsOf(p.TenantSlug, stored), nil
}

// DeleteSSO removes the tenant's single sign-on (tenant owners only): its people sign
// in with passwords again, and every link to the identity provider goes. The change is
// audited and kept for every owner to acknowledge.
func (s *Server) DeleteSSO(ctx context.Context, p switchboard.Principal) error {
	if err := mayOwnSSO(p); err != nil {
		return err
	}
	old, err := s.ssoConfigOf(ctx, p.TenantID)
	if err != nil {
		return err
	}
	if old == nil {
		return switchboard.NotFound("single sign-on")
	}
	detail := "single sign-on removed (issuer " + old.Issuer + "): passwords work again, every link to the issuer removed"
	var gone bool
	err = s.o.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("tenant_id = ?", p.TenantID).Delete(&ssoConfig{})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		gone = true
		if err := unlinkOthers(tx, p.TenantID, ""); err != nil {
			return err
		}
		return s.noteSSOChange(tx, p, detail)
	})
	if err != nil {
		return switchboard.Internal(fmt.Errorf("delete single sign-on of tenant %s: %w", p.TenantID, err))
	}
	if !gone {
		return switchboard.NotFound("single sign-on")
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindSSODeleted, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok", Detail: detail})
	return nil
}

// PasswordsAllowed is the tenants store's password policy (tenants.PasswordPolicy):
// false where the tenant turned passwords off for single sign-on.
func (s *Server) PasswordsAllowed(ctx context.Context, tenant switchboard.TenantID) (bool, error) {
	c, err := s.ssoConfigOf(ctx, tenant)
	if err != nil {
		return false, err
	}
	return c == nil || !c.PasswordsOff, nil
}

// SignInMethods says how the tenant a slug names signs in, for the sign-in page:
// whether it has single sign-on, and whether passwords work. An unknown slug answers
// passwords only, like a tenant without single sign-on.
func (s *Server) SignInMethods(ctx context.Context, slug string) (sso, passwords bool, err error) {
	if s.o.Accounts == nil || slug == "" {
		return false, true, nil
	}
	t, err := s.o.Accounts.TenantBySlug(ctx, slug)
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		return false, true, nil
	}
	if err != nil {
		return false, true, err
	}
	c, err := s.ssoConfigOf(ctx, t.ID)
	if err != nil || c == nil {
		return false, true, err
	}
	return true, !c.PasswordsOff, nil
}

// commit writes an audit event and returns once it is durable, when the recorder can
// say so (audit.Writer's Commit); otherwise it records it like record.
func (s *Server) commit(ctx context.Context, e audit.Event) error {
	if c, ok := s.o.Audit.(interface {
		Commit(context.Context, audit.Event) error
	}); ok {
		return c.Commit(ctx, e)
	}
	s.record(e)
	return nil
}

// record writes an audit event when the server has a recorder.
func (s *Server) record(e audit.Event) {
	if s.o.Audit != nil {
		s.o.Audit.Record(e)
	}
}

// SSOSealedRecords returns the tenants' single sign-on client secrets and the PKCE
// verifiers of sign-ins under way, for key rotation.
func SSOSealedRecords(db *gorm.DB, kr keyring.Keyring) []keyring.SealedRecords {
	return []keyring.SealedRecords{
		&keyring.SealedTable{
			DB: db, Keyring: kr, Name: "sso_configs", Table: "sso_configs",
			Parts: []keyring.SealedColumns{{Sealed: "sealed", KeyID: "key_id", AAD: func(r keyring.SealedRow) []byte { return ssoSecretAAD(r.TenantID) }}},
		},
		&keyring.SealedTable{
			DB: db, Keyring: kr, Name: "sso_logins", Table: "sso_logins",
			Parts: []keyring.SealedColumns{{Sealed: "sealed", KeyID: "key_id", AAD: func(r keyring.SealedRow) []byte { return ssoLoginAAD(r.TenantID, r.ID) }}},
		},
	}
}
