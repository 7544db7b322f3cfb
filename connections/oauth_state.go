package connections

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// stateTTL is how long an OAuth state stays valid after the flow starts.
const stateTTL = 10 * time.Minute

// oauthStateRow is a row of oauth_states: one started connect flow. ID is the SHA-256
// of the state sent to the provider and BrowserHash that of the cookie set in the
// browser that started it; neither secret is stored.
type oauthStateRow struct {
	ID          string               `gorm:"primaryKey;size:64"`
	TenantID    switchboard.TenantID `gorm:"size:40;not null"`
	UserID      string               `gorm:"size:40;not null"`
	Provider    string               `gorm:"size:64;not null"`
	ClientID    string               `gorm:"size:255;not null"`
	BrowserHash string               `gorm:"size:64;not null"`
	RedirectURI string               `gorm:"size:2000;not null"`
	Sealed      []byte               `gorm:"not null"`
	KeyID       string               `gorm:"size:128;not null"`
	ExpiresAt   time.Time            `gorm:"not null"`
	UsedAt      *time.Time
	CreatedAt   time.Time `gorm:"not null"`
}

func (oauthStateRow) TableName() string { return "oauth_states" }

// statePayload is what a state row keeps sealed: the PKCE verifier and the options of
// the connection the flow will create.
type statePayload struct {
	Verifier string `json:"verifier,omitempty"`
	Shared   bool   `json:"shared,omitempty"`
	Label    string `json:"label,omitempty"`
	// ConnectionID is the connection the flow reconnects in place, if any.
	ConnectionID string `json:"connection_id,omitempty"`
	// Extra is what a flow of a provider outside the registry keeps for its callback
	// (see StartExternalOAuth); it is sealed with the rest.
	Extra []byte `json:"extra,omitempty"`
	// LinkID is the connect link the flow was started from, completed with the
	// connection it makes.
	LinkID string `json:"link_id,omitempty"`
	// AddScopes are the only scopes the flow asked: those granted before are kept.
	AddScopes []string `json:"add_scopes,omitempty"`
}

// secretHash is the hex SHA-256 of a high-entropy secret (a state, a browser cookie).
func secretHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func oauthStateAAD(tenant switchboard.TenantID, id string) []byte {
	return []byte("switchboard/oauth-state/v1\x00" + string(tenant) + "\x00" + id)
}

// createOAuthState stores a started flow with its payload sealed.
func (s *Store) createOAuthState(ctx context.Context, row *oauthStateRow, payload statePayload) error {
	plain, err := json.Marshal(payload)
	if err != nil {
		return switchboard.Internal(fmt.Errorf("encode oauth state: %w", err))
	}
	sealed, keyID, err := s.kr.Seal(ctx, plain, oauthStateAAD(row.TenantID, row.ID))
	clear(plain)
	if err != nil {
		return switchboard.Internal(fmt.Errorf("seal oauth state: %w", err))
	}
	row.Sealed, row.KeyID = sealed, keyID
	if err := s.db.WithContext(ctx).Create(row).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("store oauth state: %w", err))
	}
	return nil
}

// Why a state cannot finish a flow. The state is the lookup key itself (a secret only
// the flow's browser holds), so this is the one store lookup that does not take the
// tenant: the row names it.
func errStateUnknown() error {
	return switchboard.Invalid("state", "is unknown: start connecting again from Switchboard")
}

func errStateUsed() error {
	return switchboard.Invalid("state", "was used already: each connect link works once; start connecting again from Switchboard")
}

func errStateExpired() error {
	return switchboard.Invalid("state", "has expired (a connect link is valid for 10 minutes): start connecting again from Switchboard")
}

// consumeOAuthState marks the flow of a state used, once: a second call with the same
// state fails whatever happened to the first. It returns the row and its payload.
// check runs on the row before it is marked: a refusal from it leaves the state unused,
// so whoever holds only the URL (not the flow's browser) cannot burn it.
func (s *Store) consumeOAuthState(ctx context.Context, state string, now time.Time, check func(oauthStateRow) error) (oauthStateRow, statePayload, error) {
	if state == "" || len(state) > 512 {
		return oauthStateRow{}, statePayload{}, errStateUnknown()
	}
	var row oauthStateRow
	err := s.db.WithContext(ctx).Where("id = ?", secretHash(state)).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return oauthStateRow{}, statePayload{}, errStateUnknown()
	case err != nil:
		return oauthStateRow{}, statePayload{}, switchboard.Internal(fmt.Errorf("read oauth state: %w", err))
	case row.UsedAt != nil:
		return row, statePayload{}, errStateUsed()
	}
	if err := check(row); err != nil {
		return row, statePayload{}, err
	}
	res := s.db.WithContext(ctx).Model(&oauthStateRow{}).Where("id = ? AND used_at IS NULL", row.ID).Update("used_at", now.UTC().Truncate(time.Microsecond))
	if res.Error != nil {
		return oauthStateRow{}, statePayload{}, switchboard.Internal(fmt.Errorf("consume oauth state: %w", res.Error))
	}
	if res.RowsAffected == 0 {
		return row, statePayload{}, errStateUsed()
	}
	if !now.Before(row.ExpiresAt) {
		return row, statePayload{}, errStateExpired()
	}
	plain, err := s.kr.Open(ctx, row.KeyID, row.Sealed, oauthStateAAD(row.TenantID, row.ID))
	if err != nil {
		return row, statePayload{}, switchboard.Internal(fmt.Errorf("open oauth state: %w", err))
	}
	defer clear(plain)
	var p statePayload
	if err := json.Unmarshal(plain, &p); err != nil {
		return row, statePayload{}, switchboard.Internal(fmt.Errorf("decode oauth state: %w", err))
	}
	return row, p, nil
}

// PurgeOAuthStates deletes states that expired before cutoff, used or not.
func (s *Store) PurgeOAuthStates(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at < ?", cutoff.UTC()).Delete(&oauthStateRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("purge oauth states: %w", res.Error)
	}
	return res.RowsAffected, nil
}
