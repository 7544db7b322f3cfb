package connections

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// ConnectLinkTTL is how long a connect link stays valid after a call made it.
const ConnectLinkTTL = 10 * time.Minute

// connectLinkRow is a row of connect_links: a link a tool call gave its person to
// connect (or reconnect, or widen the scopes of) an account from the conversation. ID
// is the SHA-256 of the link's secret; the secret is not stored.
type connectLinkRow struct {
	ID           string               `gorm:"primaryKey;size:64"`
	TenantID     switchboard.TenantID `gorm:"size:40;not null"`
	UserID       string               `gorm:"size:40;not null"` // the person who may open it
	Principal    string               `gorm:"size:80;not null"` // who made the call (Principal.ID)
	Provider     string               `gorm:"size:64;not null"`
	ConnectionID string               `gorm:"size:40;not null"` // the connection to reconnect, if any
	Scopes       string               `gorm:"size:2000;not null"`
	ExpiresAt    time.Time            `gorm:"not null"`
	UsedAt       *time.Time
	ConnectedAt  *time.Time
	Connected    string    `gorm:"size:40;not null"` // the connection the flow made or renewed
	CreatedAt    time.Time `gorm:"not null"`
}

func (connectLinkRow) TableName() string { return "connect_links" }

// ConnectLinkInput is what a call needs connected: an account of Provider, or the
// connection ConnectionID reconnected, with at least Scopes (only the missing ones).
type ConnectLinkInput struct {
	Provider     string
	ConnectionID string
	Scopes       []string
}

// ConnectLink is a link made for a call: Secret goes in its URL (PublicURL/connect/
// Secret), ID names it in the elicitation and in ConnectLinkDone.
type ConnectLink struct {
	ID        string
	Secret    string
	ExpiresAt time.Time
}

// IssueConnectLink makes a single-use link, valid ConnectLinkTTL, that lets the person
// behind p (a user, or the user who created an agent) connect what in asks for. The
// provider must connect with OAuth.
func (s *Service) IssueConnectLink(ctx context.Context, p switchboard.Principal, in ConnectLinkInput) (ConnectLink, error) {
	if p.UserID == "" {
		return ConnectLink{}, switchboard.Errorf(switchboard.CodeForbidden, "no person stands behind this caller to connect an account")
	}
	if _, err := s.oauthProvider(in.Provider); err != nil {
		return ConnectLink{}, err
	}
	secret := switchboard.RandomToken(32)
	now := s.now().UTC().Truncate(time.Microsecond)
	row := connectLinkRow{
		ID: secretHash(secret), TenantID: p.TenantID, UserID: p.UserID, Principal: p.ID(), Provider: in.Provider,
		ConnectionID: in.ConnectionID, Scopes: scopes(in.Scopes), ExpiresAt: now.Add(ConnectLinkTTL), CreatedAt: now,
	}
	if err := s.store.db.WithContext(ctx).Create(&row).Error; err != nil {
		return ConnectLink{}, switchboard.Internal(fmt.Errorf("create connect link: %w", err))
	}
	return ConnectLink{ID: row.ID, Secret: secret, ExpiresAt: row.ExpiresAt}, nil
}

// ConnectLinkDone reports whether the link id of the tenant led to a connection, and
// which; an expired link that did not is an error saying so.
func (s *Service) ConnectLinkDone(ctx context.Context, tenant switchboard.TenantID, id string) (connectionID string, done bool, err error) {
	var row connectLinkRow
	err = s.store.db.WithContext(ctx).Where("id = ? AND tenant_id = ?", id, tenant).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return "", false, switchboard.NotFound("connect link")
	case err != nil:
		return "", false, switchboard.Internal(fmt.Errorf("read connect link: %w", err))
	case row.ConnectedAt != nil:
		return row.Connected, true, nil
	case !s.now().Before(row.ExpiresAt.Add(stateTTL)):
		// A flow started at the link's last moment has its state's lifetime to finish.
		return "", false, switchboard.Errorf(switchboard.CodeConflict, "the connect link expired before an account was connected")
	}
	return "", false, nil
}

// StartConnectLink starts the OAuth flow of the link whose secret is given, for p, the
// signed-in person, who must be the person the link was made for: a link is used
// once, within ConnectLinkTTL. A refusal of another person leaves the link unused.
func (s *Service) StartConnectLink(ctx context.Context, p switchboard.Principal, secret string) (Authorization, error) {
	if secret == "" || len(secret) > 512 {
		return Authorization{}, switchboard.NotFound("connect link")
	}
	var row connectLinkRow
	err := s.store.db.WithContext(ctx).Where("id = ?", secretHash(secret)).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Authorization{}, switchboard.NotFound("connect link")
	case err != nil:
		return Authorization{}, switchboard.Internal(fmt.Errorf("read connect link: %w", err))
	}
	if p.Kind != switchboard.PrincipalUser || p.TenantID != row.TenantID || p.UserID != row.UserID {
		return Authorization{}, switchboard.Errorf(switchboard.CodeForbidden, "this connect link was made for another person: sign in as the person whose agent asked, or ask the agent again")
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if row.UsedAt != nil {
		return Authorization{}, switchboard.Errorf(switchboard.CodeConflict, "this connect link was used already: ask the agent to call the tool again for a new one")
	}
	if !now.Before(row.ExpiresAt) {
		return Authorization{}, switchboard.Errorf(switchboard.CodeConflict, "this connect link expired (links are valid 10 minutes): ask the agent to call the tool again for a new one")
	}
	res := s.store.db.WithContext(ctx).Model(&connectLinkRow{}).Where("id = ? AND used_at IS NULL", row.ID).Update("used_at", now)
	if res.Error != nil {
		return Authorization{}, switchboard.Internal(fmt.Errorf("use connect link: %w", res.Error))
	}
	if res.RowsAffected == 0 {
		return Authorization{}, switchboard.Errorf(switchboard.CodeConflict, "this connect link was used already: ask the agent to call the tool again for a new one")
	}
	return s.authorize(ctx, p, AuthorizeInput{Provider: row.Provider, ConnectionID: row.ConnectionID}, flowOptions{linkID: row.ID, scopes: strings.Fields(row.Scopes)})
}

// completeConnectLink records that the link's flow made or renewed connectionID.
func (s *Store) completeConnectLink(ctx context.Context, tenant switchboard.TenantID, id, connectionID string, now time.Time) error {
	err := s.db.WithContext(ctx).Model(&connectLinkRow{}).Where("id = ? AND tenant_id = ?", id, tenant).
		Updates(map[string]any{"connected_at": now.UTC().Truncate(time.Microsecond), "connected": connectionID}).Error
	if err != nil {
		return switchboard.Internal(fmt.Errorf("complete connect link: %w", err))
	}
	return nil
}

// PurgeConnectLinks deletes links that expired before cutoff.
func (s *Store) PurgeConnectLinks(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at < ?", cutoff.UTC()).Delete(&connectLinkRow{})
	return res.RowsAffected, res.Error
}

// flowOptions are the options of a flow started from a connect link.
type flowOptions struct {
	linkID string
	scopes []string // only these scopes are asked (incremental authorization)
}
