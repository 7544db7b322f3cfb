package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ssoLink0023 links a user to their account at the tenant's identity provider: the
// issuer and the subject (the ID token's sub) single sign-on must assert before it
// opens an owner's or an admin's account, and how the link was made (the person's
// password, the invitation they joined with, or an owner's approval). A pending link
// is a refused sign-in's request, which an owner may approve. One per user and issuer.
type ssoLink0023 struct {
	ID        string    `gorm:"primaryKey;size:40"`
	TenantID  string    `gorm:"size:40;not null;uniqueIndex:sso_links_user_issuer,priority:1"`
	UserID    string    `gorm:"size:40;not null;uniqueIndex:sso_links_user_issuer,priority:2"`
	Issuer    string    `gorm:"size:2048;not null;uniqueIndex:sso_links_user_issuer,priority:3"`
	Subject   string    `gorm:"size:255;not null"`
	Email     string    `gorm:"size:320;not null"`
	LinkedBy  string    `gorm:"size:64;not null"`
	Pending   bool      `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

func (ssoLink0023) TableName() string { return "sso_links" }

// ssoChange0023 is a change of a tenant's single sign-on settings, which every owner
// of the tenant is shown until they acknowledge it: who made it and what changed
// (never the client secret).
type ssoChange0023 struct {
	ID        string    `gorm:"primaryKey;size:40"`
	TenantID  string    `gorm:"size:40;not null;index:sso_changes_tenant_created,priority:1"`
	Principal string    `gorm:"size:200;not null"`
	Detail    string    `gorm:"type:text;not null"`
	CreatedAt time.Time `gorm:"not null;index:sso_changes_tenant_created,priority:2"`
}

func (ssoChange0023) TableName() string { return "sso_changes" }

// ssoChangeAck0023 is one owner's acknowledgement of a change of single sign-on.
type ssoChangeAck0023 struct {
	ChangeID  string    `gorm:"primaryKey;size:40"`
	UserID    string    `gorm:"primaryKey;size:40"`
	TenantID  string    `gorm:"size:40;not null"`
	CreatedAt time.Time `gorm:"not null"`
}

func (ssoChangeAck0023) TableName() string { return "sso_change_acks" }

// ssoLoginLink0023 is migration 0023's frozen copy of the column it adds to
// sso_logins: the user a sign-in under way links rather than signs in ("" for a
// sign-in). Never edit it.
type ssoLoginLink0023 struct {
	LinkUserID string `gorm:"size:40;not null;default:''"`
}

func (ssoLoginLink0023) TableName() string { return "sso_logins" }

// up0023SSOLinks creates the links between people and their identity provider
// accounts and the changes of single sign-on owners acknowledge, and lets a sign-in
// under way be a link instead.
func up0023SSOLinks(tx *gorm.DB) error {
	for _, m := range []any{&ssoLink0023{}, &ssoChange0023{}, &ssoChangeAck0023{}} {
		if err := tx.Migrator().CreateTable(m); err != nil {
			return fmt.Errorf("create %T: %w", m, err)
		}
	}
	if err := tx.Migrator().AddColumn(&ssoLoginLink0023{}, "LinkUserID"); err != nil {
		return fmt.Errorf("add sso_logins.link_user_id: %w", err)
	}
	return nil
}
