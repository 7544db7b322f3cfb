package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
)

// maxSSOChangesShown bounds the unacknowledged changes one answer lists.
const maxSSOChangesShown = 50

// ssoChange is a row of sso_changes: a change of the tenant's single sign-on, shown
// to each of its owners until they acknowledge it.
type ssoChange struct {
	ID        string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	Principal string               `gorm:"size:200;not null"`
	Detail    string               `gorm:"type:text;not null"`
	CreatedAt time.Time            `gorm:"not null"`
}

func (ssoChange) TableName() string { return "sso_changes" }

// ssoChangeAck is a row of sso_change_acks: one owner acknowledged one change.
type ssoChangeAck struct {
	ChangeID  string               `gorm:"primaryKey;size:40"`
	UserID    string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	CreatedAt time.Time            `gorm:"not null"`
}

func (ssoChangeAck) TableName() string { return "sso_change_acks" }

// SSOChange is a change of the tenant's single sign-on as an owner is shown it: who
// made it (a principal such as user:usr_…, and their email when known), when, and
// what changed (never the client secret).
type SSOChange struct {
	ID        string    `json:"id"`
	ChangedBy string    `json:"changed_by"`
	Email     string    `json:"email,omitempty"`
	Detail    string    `json:"detail"`
	CreatedAt time.Time `json:"created_at"`
}

// describeSSOChange says what a change of single sign-on changed, from old (nil when
// there was none) to c; newSecret says the client secret was replaced.
func describeSSOChange(old, c *ssoConfig, newSecret bool) string {
	onOff := func(off bool) string {
		if off {
			return "off"
		}
		return "on"
	}
	if old == nil {
		return fmt.Sprintf("single sign-on set up: issuer %s, client %s, domains %q, passwords %s", c.Issuer, c.ClientID, c.AllowedDomains, onOff(c.PasswordsOff))
	}
	var parts []string
	if old.Issuer != c.Issuer {
		parts = append(parts, fmt.Sprintf("issuer %s → %s (every link to the former issuer removed)", old.Issuer, c.Issuer))
	}
	if old.ClientID != c.ClientID {
		parts = append(parts, fmt.Sprintf("client %s → %s", old.ClientID, c.ClientID))
	}
	if old.AllowedDomains != c.AllowedDomains {
		parts = append(parts, fmt.Sprintf("domains %q → %q", old.AllowedDomains, c.AllowedDomains))
	}
	if old.PasswordsOff != c.PasswordsOff {
		parts = append(parts, fmt.Sprintf("passwords %s → %s", onOff(old.PasswordsOff), onOff(c.PasswordsOff)))
	}
	if newSecret {
		parts = append(parts, "new client secret")
	}
	if len(parts) == 0 {
		parts = append(parts, "saved unchanged")
	}
	return fmt.Sprintf("single sign-on changed (issuer %s): %s", c.Issuer, strings.Join(parts, "; "))
}

// noteSSOChange stores a change for the tenant's owners to acknowledge, the one who
// made it included: whoever holds an owner's key or session, the owner is told.
func (s *Server) noteSSOChange(tx *gorm.DB, p switchboard.Principal, detail string) error {
	now := s.now().UTC().Truncate(time.Microsecond)
	c := ssoChange{ID: switchboard.NewID("ssc"), TenantID: p.TenantID, Principal: p.ID(), Detail: detail, CreatedAt: now}
	if err := tx.Create(&c).Error; err != nil {
		return fmt.Errorf("store the change of single sign-on: %w", err)
	}
	return nil
}

// SSOChanges returns the changes of the tenant's single sign-on the owner asking has
// not acknowledged, newest first (owners only; at most 50).
func (s *Server) SSOChanges(ctx context.Context, p switchboard.Principal) ([]SSOChange, error) {
	if err := mayOwnSSO(p); err != nil {
		return nil, err
	}
	var rows []ssoChange
	err := s.o.DB.WithContext(ctx).Where("tenant_id = ?", p.TenantID).
		Where("NOT EXISTS (SELECT 1 FROM sso_change_acks a WHERE a.change_id = sso_changes.id AND a.user_id = ?)", p.UserID).
		Order("created_at DESC, id DESC").Limit(maxSSOChangesShown).Find(&rows).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list changes of single sign-on of tenant %s: %w", p.TenantID, err))
	}
	out := make([]SSOChange, 0, len(rows))
	emails := map[string]string{}
	for _, c := range rows {
		v := SSOChange{ID: c.ID, ChangedBy: c.Principal, Detail: c.Detail, CreatedAt: c.CreatedAt}
		if id, ok := strings.CutPrefix(c.Principal, "user:"); ok && s.o.Accounts != nil {
			if _, seen := emails[id]; !seen {
				if u, err := s.o.Accounts.User(ctx, p.TenantID, id); err == nil {
					emails[id] = u.Email
				} else {
					emails[id] = ""
				}
			}
			v.Email = emails[id]
		}
		out = append(out, v)
	}
	return out, nil
}

// AcknowledgeSSOChange records that the owner asking has seen a change of single
// sign-on: it is no longer shown to them (owners only; each owner acknowledges for
// themselves).
func (s *Server) AcknowledgeSSOChange(ctx context.Context, p switchboard.Principal, id string) error {
	if err := mayOwnSSO(p); err != nil {
		return err
	}
	var c ssoChange
	err := s.o.DB.WithContext(ctx).Where("tenant_id = ? AND id = ?", p.TenantID, id).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return switchboard.NotFound("change of single sign-on")
	}
	if err != nil {
		return switchboard.Internal(fmt.Errorf("read change of single sign-on %s: %w", id, err))
	}
	ack := ssoChangeAck{ChangeID: c.ID, UserID: p.UserID, TenantID: p.TenantID, CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
	if err := s.o.DB.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&ack).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("acknowledge change of single sign-on %s: %w", id, err))
	}
	return nil
}
