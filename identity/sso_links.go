package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/tenants"
)

// SSOLinkPath is where a person signed in with their password links their account to
// the tenant's identity provider (POST, from Settings): single sign-on opens an
// owner's or an admin's account only once it is linked.
const SSOLinkPath = "/signin/sso/link"

// How a link was made (ssoLink.LinkedBy); an owner's approval is "owner:" and their
// user ID.
const (
	linkedByPassword   = "password"
	linkedByInvitation = "invitation"
)

// ssoLink is a row of sso_links: the subject at the tenant's identity provider (the
// issuer) single sign-on must assert to open an owner's or an admin's account. A
// pending one is what a refused sign-in asserted, for an owner to approve.
type ssoLink struct {
	ID        string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	UserID    string               `gorm:"size:40;not null"`
	Issuer    string               `gorm:"size:2048;not null"`
	Subject   string               `gorm:"size:255;not null"`
	Email     string               `gorm:"size:320;not null"`
	LinkedBy  string               `gorm:"size:64;not null"`
	Pending   bool                 `gorm:"not null"`
	CreatedAt time.Time            `gorm:"not null"`
}

func (ssoLink) TableName() string { return "sso_links" }

// SSOLink is a person's link to the tenant's identity provider as the API shows it:
// linked, or pending (a refused sign-in an owner may approve).
type SSOLink struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	Email     string    `json:"email"`
	Subject   string    `json:"subject"`
	LinkedBy  string    `json:"linked_by,omitempty"`
	Pending   bool      `json:"pending"`
	CreatedAt time.Time `json:"created_at"`
}

// unlinkedError refuses a single sign-on to an owner's or an admin's account that is
// not linked to the identity provider's subject.
type unlinkedError struct {
	role switchboard.Role
}

func (e *unlinkedError) Error() string {
	return "single sign-on refused: the " + string(e.role) + "'s account is not linked to this identity provider"
}

// page is what the refused person reads.
func (e *unlinkedError) page(slug string) string {
	return fmt.Sprintf("your account is an %s of workspace %s, and single sign-on opens such an account only once it is linked to this identity provider. "+
		"Sign in with your password, then choose Link single sign-on in Settings; or ask another owner of %s to approve the link request this sign-in left.",
		e.role, slug, slug)
}

// admitSSO is the check SignInSSO makes before it starts a session: a member passes;
// an owner or an admin passes only when their account is linked to the subject the
// identity provider asserted. Who joins as an owner or an admin by an invitation is
// linked as they join. An unlinked owner's or admin's sign-in leaves a pending link
// for an owner to approve, and is refused.
func (s *Server) admitSSO(ctx context.Context, c *ssoConfig, subject, email string) func(tenants.User, string) error {
	return func(u tenants.User, joinedBy string) error {
		if !u.Role.IsAdmin() {
			return nil
		}
		link := ssoLink{ID: switchboard.NewID("ssk"), TenantID: c.TenantID, UserID: u.ID, Issuer: c.Issuer, Subject: subject, Email: email,
			CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
		if joinedBy != "" {
			link.LinkedBy = linkedByInvitation
			return s.saveLink(ctx, link)
		}
		l, err := s.linkOf(ctx, c.TenantID, u.ID, c.Issuer)
		if err != nil {
			return err
		}
		if l != nil && !l.Pending && subject != "" && subject == l.Subject {
			return nil
		}
		if l == nil || l.Pending {
			link.Pending = true
			if err := s.saveLink(ctx, link); err != nil {
				return err
			}
		}
		return &unlinkedError{role: u.Role}
	}
}

// linkOf returns the user's link to the issuer, or nil.
func (s *Server) linkOf(ctx context.Context, tenant switchboard.TenantID, userID, issuer string) (*ssoLink, error) {
	var l ssoLink
	err := s.o.DB.WithContext(ctx).Where("tenant_id = ? AND user_id = ? AND issuer = ?", tenant, userID, issuer).Take(&l).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil, nil
	case err != nil:
		return nil, switchboard.Internal(fmt.Errorf("read single sign-on link of user %s: %w", userID, err))
	}
	return &l, nil
}

// saveLink stores a link, replacing the user's link to the same issuer; a pending
// one replaces only another pending one.
func (s *Server) saveLink(ctx context.Context, l ssoLink) error {
	onConflict := clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "user_id"}, {Name: "issuer"}},
		DoUpdates: clause.AssignmentColumns([]string{"subject", "email", "linked_by", "pending", "created_at"}),
	}
	if l.Pending {
		onConflict.Where = clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "sso_links.pending = ?", Vars: []any{true}}}}
	}
	if err := s.o.DB.WithContext(ctx).Clauses(onConflict).Create(&l).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("store single sign-on link of user %s: %w", l.UserID, err))
	}
	return nil
}

// unlinkOthers deletes the tenant's links to every issuer but keep ("" deletes them
// all): re-pointing single sign-on breaks the links to the former provider.
func unlinkOthers(tx *gorm.DB, tenant switchboard.TenantID, keep string) error {
	if err := tx.Where("tenant_id = ? AND issuer <> ?", tenant, keep).Delete(&ssoLink{}).Error; err != nil {
		return fmt.Errorf("delete single sign-on links of tenant %s: %w", tenant, err)
	}
	return nil
}

// LinkSSO starts linking the signed-in person's account to the tenant's identity
// provider: the form brings the session's anti-forgery token (csrf) and the person's
// password, which must be right; the browser then goes to the identity provider, and
// the callback links the subject it asserts for the person's email.
func (s *Server) LinkSSO(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "link single sign-on with POST, from Settings", http.StatusMethodNotAllowed)
		return
	}
	if !s.mayStartSSO(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	ctx := r.Context()
	var session string
	var p switchboard.Principal
	ok := s.o.Sessions != nil && s.o.Accounts != nil
	if ok {
		session, p, ok = s.signedIn(r)
	}
	if !ok {
		s.renderSSOError(w, r, http.StatusUnauthorized, "", "Sign in with your password first, then link single sign-on in Settings.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.o.Sessions.CSRFToken(session))) != 1 {
		s.renderSSOError(w, r, http.StatusForbidden, p.TenantSlug, "This form has expired. Reload Settings and try again.")
		return
	}
	t, err := s.o.Accounts.Tenant(ctx, p.TenantID)
	if err != nil {
		s.ssoInternal(w, r, "", "find workspace", err)
		return
	}
	if err := s.o.Accounts.ConfirmPassword(ctx, p.TenantID, p.UserID, r.PostFormValue("password")); err != nil {
		if e := switchboard.AsError(err); e.Code != switchboard.CodeInternal {
			s.renderSSOError(w, r, e.Code.HTTPStatus(), t.Slug, "Your account was not linked: "+e.Message+".")
			return
		}
		s.ssoInternal(w, r, t.Slug, "confirm password", err)
		return
	}
	c, err := s.ssoConfigOf(ctx, t.ID)
	if err != nil {
		s.ssoInternal(w, r, t.Slug, "read single sign-on", err)
		return
	}
	if c == nil {
		s.renderSSOError(w, r, http.StatusNotFound, t.Slug, "Your workspace has no single sign-on to link.")
		return
	}
	s.sendToProvider(w, r, t, c, "/settings", p.UserID)
}

// finishLink links the user a link under way names to the subject the identity
// provider asserted, when the verified email is theirs; the browser keeps its session
// and goes back to where the link started.
func (s *Server) finishLink(w http.ResponseWriter, r *http.Request, t tenants.Tenant, c *ssoConfig, login *ssoLogin, subject, email string) {
	ctx := r.Context()
	u, err := s.o.Accounts.User(ctx, t.ID, login.LinkUserID)
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		s.renderSSOError(w, r, http.StatusNotFound, t.Slug, "Your account was removed while you were linking it.")
		return
	}
	if err != nil {
		s.ssoInternal(w, r, t.Slug, "find user", err)
		return
	}
	if !strings.EqualFold(u.Email, email) || subject == "" {
		s.record(audit.Event{TenantID: t.ID, Kind: audit.KindSSOLinked, Principal: "user:" + u.ID, Outcome: "forbidden",
			Detail: truncate(fmt.Sprintf("single sign-on link refused: the identity provider asserted %s, not %s", email, u.Email), 500)})
		s.renderSSOError(w, r, http.StatusForbidden, t.Slug, fmt.Sprintf("Your identity provider signed you in as %s, but your account here is %s: sign in there as %s, then link again.", email, u.Email, u.Email))
		return
	}
	link := ssoLink{ID: switchboard.NewID("ssk"), TenantID: t.ID, UserID: u.ID, Issuer: c.Issuer, Subject: subject, Email: u.Email,
		LinkedBy: linkedByPassword, CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
	if err := s.saveLink(ctx, link); err != nil {
		s.ssoInternal(w, r, t.Slug, "link account", err)
		return
	}
	s.record(audit.Event{TenantID: t.ID, Kind: audit.KindSSOLinked, Principal: "user:" + u.ID, Outcome: "ok",
		Detail: truncate(fmt.Sprintf("linked to single sign-on (%s, subject %s) after confirming the password", c.Issuer, subject), 500)})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, login.Next, http.StatusSeeOther)
}

// mayOwnSSO refuses principals other than the tenant's owners, in person.
func mayOwnSSO(p switchboard.Principal) error {
	if p.Kind != switchboard.PrincipalUser || p.Role != switchboard.RoleOwner {
		return &switchboard.Error{Code: switchboard.CodeForbidden, Message: "single sign-on is managed by a tenant owner, with their own key or session: admins, members and agent keys may not read or change it"}
	}
	return nil
}

// SSOLinks lists the links of the tenant's people to its identity provider, the
// pending ones (refused sign-ins an owner may approve) first (owners only).
func (s *Server) SSOLinks(ctx context.Context, p switchboard.Principal) ([]SSOLink, error) {
	if err := mayOwnSSO(p); err != nil {
		return nil, err
	}
	var rows []ssoLink
	if err := s.o.DB.WithContext(ctx).Where("tenant_id = ?", p.TenantID).Order("pending DESC, created_at DESC, id").Limit(500).Find(&rows).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list single sign-on links of tenant %s: %w", p.TenantID, err))
	}
	out := make([]SSOLink, 0, len(rows))
	for _, l := range rows {
		out = append(out, l.view())
	}
	return out, nil
}

func (l ssoLink) view() SSOLink {
	return SSOLink{ID: l.ID, UserID: l.UserID, Email: l.Email, Subject: l.Subject, LinkedBy: l.LinkedBy, Pending: l.Pending, CreatedAt: l.CreatedAt}
}

// ApproveSSOLink links a person's account to the subject their refused sign-in
// asserted (owners only): their next single sign-on opens it.
func (s *Server) ApproveSSOLink(ctx context.Context, p switchboard.Principal, id string) (SSOLink, error) {
	if err := mayOwnSSO(p); err != nil {
		return SSOLink{}, err
	}
	var l ssoLink
	err := s.o.DB.WithContext(ctx).Where("tenant_id = ? AND id = ?", p.TenantID, id).Take(&l).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return SSOLink{}, switchboard.NotFound("single sign-on link")
	}
	if err != nil {
		return SSOLink{}, switchboard.Internal(fmt.Errorf("read single sign-on link %s: %w", id, err))
	}
	if !l.Pending {
		return SSOLink{}, switchboard.Errorf(switchboard.CodeConflict, "this link is approved already")
	}
	l.Pending, l.LinkedBy = false, "owner:"+p.UserID
	res := s.o.DB.WithContext(ctx).Model(&ssoLink{}).Where("tenant_id = ? AND id = ? AND pending = ?", p.TenantID, id, true).
		Updates(map[string]any{"pending": false, "linked_by": l.LinkedBy})
	if res.Error != nil {
		return SSOLink{}, switchboard.Internal(fmt.Errorf("approve single sign-on link %s: %w", id, res.Error))
	}
	if res.RowsAffected == 0 {
		return SSOLink{}, switchboard.Errorf(switchboard.CodeConflict, "this link changed meanwhile; reload the list")
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindSSOLinked, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: truncate(fmt.Sprintf("approved the single sign-on link of user %s (%s, subject %s)", l.UserID, l.Issuer, l.Subject), 500)})
	return l.view(), nil
}
