package tenants

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/limits"
)

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$`)

// ValidSlug reports whether s has the form of a tenant slug (3 to 40 lowercase letters,
// digits and inner hyphens), whether or not a tenant has it.
func ValidSlug(s string) bool { return slugPattern.MatchString(s) }

// Store keeps tenants, users and API keys. Every method takes the tenant, except
// CreateTenant, CreateTenantWithOwner, TenantBySlug, ListTenants (the operator's) and
// Authenticate (which finds the tenant from the key).
type Store struct {
	db    *gorm.DB
	cache *keyCache
	// signIns throttles password sign-ins and keyMisses lookups of unknown API keys
	// (see SetThrottles).
	signIns   *limits.SignIns
	keyMisses *limits.KeyMisses
	// pwChecks counts password hash comparisons, for tests.
	pwChecks atomic.Int64
	// pwCost is the bcrypt cost of new password hashes.
	pwCost    atomic.Int32
	dummyOnce sync.Once
	dummy     []byte
	wg        sync.WaitGroup     // last_used_at updates in flight
	lookups   singleflight.Group // uncached keys' lookups, one per key at a time
	hooks     revokeHooks
	feed      events.Bus     // set while wiring (SetFeed); nil invalidates this process only
	passwords PasswordPolicy // set while wiring (SetPasswordPolicy); nil allows passwords everywhere
}

// NewStore returns a Store on db.
func NewStore(db *gorm.DB) *Store {
	s := &Store{db: db, cache: newKeyCache(10_000, 30*time.Second),
		signIns: limits.NewSignIns(limits.SignInOptions{}), keyMisses: limits.NewKeyMisses(limits.KeyMissOptions{})}
	s.pwCost.Store(DefaultPasswordCost)
	return s
}

// SetThrottles replaces the sign-in and unknown-key throttles (the defaults of package
// limits otherwise); a nil one keeps the current. Call it before the store is used.
func (s *Store) SetThrottles(signIns *limits.SignIns, keyMisses *limits.KeyMisses) {
	if signIns != nil {
		s.signIns = signIns
	}
	if keyMisses != nil {
		s.keyMisses = keyMisses
	}
}

// Close waits for the background last_used_at updates to finish.
func (s *Store) Close() { s.wg.Wait() }

// CreateTenant creates a tenant. The slug is its name in URLs: 3 to 40 lower-case
// letters, digits and dashes, not starting or ending with a dash.
func (s *Store) CreateTenant(ctx context.Context, slug, name string) (Tenant, error) {
	return createTenant(s.db.WithContext(ctx), slug, name)
}

func createTenant(db *gorm.DB, slug, name string) (Tenant, error) {
	if !slugPattern.MatchString(slug) {
		return Tenant{}, switchboard.Invalid("slug", "must be 3 to 40 lower-case letters, digits and dashes, not starting or ending with a dash")
	}
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return Tenant{}, switchboard.Invalid("name", "must be 1 to 200 characters")
	}
	t := Tenant{ID: switchboard.TenantID(switchboard.NewID("ten")), Slug: slug, Name: name}
	if err := db.Create(&t).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return Tenant{}, &switchboard.Error{Code: switchboard.CodeConflict, Field: "slug", Message: fmt.Sprintf("the slug %q is taken", slug)}
		}
		return Tenant{}, switchboard.Internal(fmt.Errorf("create tenant %s: %w", slug, err))
	}
	return t, nil
}

// OwnerKeyName names the API key a new tenant's owner is created with.
const OwnerKeyName = "owner"

// CreateTenantWithOwner creates a tenant, its owner user (ownerEmail) and the owner's
// first API key, named OwnerKeyName, in one transaction: if any step fails nothing is
// left behind, so the slug stays free. The key is returned in the clear, once. A bad
// owner email is reported as the field owner_email.
func (s *Store) CreateTenantWithOwner(ctx context.Context, slug, name, ownerEmail string) (Tenant, User, string, APIKey, error) {
	var (
		tenant Tenant
		owner  User
		plain  string
		key    APIKey
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if tenant, err = createTenant(tx, slug, name); err != nil {
			return err
		}
		if owner, err = createUser(tx, tenant.ID, ownerEmail, switchboard.RoleOwner); err != nil {
			if e := switchboard.AsError(err); e.Code == switchboard.CodeInvalid && e.Field == "email" {
				return &switchboard.Error{Code: e.Code, Field: "owner_email", Message: e.Message}
			}
			return err
		}
		plain, key, err = createKey(tx, tenant.ID, owner.ID, nil, OwnerKeyName, false)
		return err
	})
	if err != nil {
		return Tenant{}, User{}, "", APIKey{}, asStoreError(err, "create tenant "+slug)
	}
	return tenant, owner, plain, key, nil
}

// TenantBySlug returns the tenant a slug names.
func (s *Store) TenantBySlug(ctx context.Context, slug string) (Tenant, error) {
	var t Tenant
	err := s.db.WithContext(ctx).Where("slug = ?", slug).Take(&t).Error
	return t, notFound(err, "tenant", "read tenant "+slug)
}

// Tenant returns a tenant by ID.
func (s *Store) Tenant(ctx context.Context, id switchboard.TenantID) (Tenant, error) {
	var t Tenant
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&t).Error
	return t, notFound(err, "tenant", "read tenant "+string(id))
}

// ListTenants returns every tenant, oldest first. Only an operator may ask.
func (s *Store) ListTenants(ctx context.Context) ([]Tenant, error) {
	var ts []Tenant
	if err := s.db.WithContext(ctx).Order("created_at, id").Find(&ts).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list tenants: %w", err))
	}
	return ts, nil
}

// CreateUser adds a user to the tenant. Emails are unique within a tenant.
func (s *Store) CreateUser(ctx context.Context, tenant switchboard.TenantID, email string, role switchboard.Role) (User, error) {
	return createUser(s.db.WithContext(ctx), tenant, email, role)
}

// CreateUserWithKey adds a user to the tenant and creates their first API key, named
// keyName, in one transaction: either both exist afterwards or neither does. The key is
// returned in the clear, once.
func (s *Store) CreateUserWithKey(ctx context.Context, tenant switchboard.TenantID, email string, role switchboard.Role, keyName string) (User, string, APIKey, error) {
	var (
		user  User
		plain string
		key   APIKey
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if user, err = createUser(tx, tenant, email, role); err != nil {
			return err
		}
		plain, key, err = createKey(tx, tenant, user.ID, nil, keyName, false)
		return err
	})
	if err != nil {
		return User{}, "", APIKey{}, asStoreError(err, "create user with key")
	}
	return user, plain, key, nil
}

func createUser(db *gorm.DB, tenant switchboard.TenantID, email string, role switchboard.Role) (User, error) {
	email, err := normalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	switch role {
	case switchboard.RoleOwner, switchboard.RoleAdmin, switchboard.RoleMember:
	default:
		return User{}, switchboard.Invalid("role", "must be owner, admin or member")
	}
	u := User{ID: switchboard.NewID("usr"), TenantID: tenant, Email: email, Role: role}
	if err := db.Create(&u).Error; err != nil {
		switch {
		case errors.Is(err, gorm.ErrDuplicatedKey):
			return User{}, &switchboard.Error{Code: switchboard.CodeConflict, Field: "email", Message: "a user with this email already exists in the tenant"}
		case errors.Is(err, gorm.ErrForeignKeyViolated):
			return User{}, switchboard.NotFound("tenant")
		}
		return User{}, switchboard.Internal(fmt.Errorf("create user: %w", err))
	}
	return u, nil
}

// normalizeEmail checks that s is a bare address (no display name) and lower-cases it.
func normalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	bad := switchboard.Invalid("email", "must be an email address such as ada@example.com")
	if s == "" || len(s) > 254 {
		return "", bad
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" {
		return "", bad
	}
	return strings.ToLower(s), nil
}

// User returns one of the tenant's users.
func (s *Store) User(ctx context.Context, tenant switchboard.TenantID, id string) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Take(&u).Error
	return u, notFound(err, "user", "read user "+id)
}

// ListUsers returns the tenant's users, oldest first.
func (s *Store) ListUsers(ctx context.Context, tenant switchboard.TenantID) ([]User, error) {
	var us []User
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Order("created_at, id").Find(&us).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list users: %w", err))
	}
	return us, nil
}

// asStoreError returns a switchboard.Error from a transaction as it is, and wraps any
// other failure (a commit that failed) as internal.
func asStoreError(err error, doing string) error {
	var e *switchboard.Error
	if errors.As(err, &e) {
		return err
	}
	return switchboard.Internal(fmt.Errorf("%s: %w", doing, err))
}

// notFound maps gorm's not-found to a not_found error of the kind, and any other
// failure to an internal error that says what was being done.
func notFound(err error, kind, doing string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return switchboard.NotFound(kind)
	default:
		return switchboard.Internal(fmt.Errorf("%s: %w", doing, err))
	}
}
