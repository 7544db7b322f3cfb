package openapis

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"golang.org/x/oauth2"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/tenants"
)

// describedAPI is a small description whose key goes in the query.
const describedAPI = `{"openapi":"3.0.3","info":{"title":"Items","version":"1"},"servers":[{"url":"https://items.example.test"}],
"security":[{"key":[]}],"components":{"securitySchemes":{"key":{"type":"apiKey","in":"query","name":"key"}}},
"paths":{"/items":{"get":{"operationId":"listItems","responses":{"200":{"description":"ok"}}}},
"/items/{id}":{"delete":{"operationId":"deleteItem","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"204":{"description":"gone"}}}}}}`

// rig is a Service on db with a guard allowing cidrs, and an admin of a tenant.
type rig struct {
	svc        *Service
	transports *providers.Transports
	admin      switchboard.Principal
}

func newRig(t *testing.T, db *gorm.DB, cidrs []string) *rig {
	t.Helper()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	tr := &providers.Transports{}
	conns := connections.NewService(connections.NewStore(db, kr), reg, tr, nil)
	guard, err := egress.NewGuard(false, cidrs)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: NewStore(db), Connections: conns, Registry: reg, Transports: tr, Guard: guard, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	slug := "t-" + switchboard.RandomToken(6)
	ten, err := ts.CreateTenant(context.Background(), slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	u, err := ts.CreateUser(context.Background(), ten.ID, "owner@"+slug+".test", switchboard.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{svc: svc, transports: tr, admin: switchboard.Principal{TenantID: ten.ID, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: switchboard.RoleOwner}}
}

// call runs a tool of the tenant's API as the router does: through the provider's
// client on the provider's (guarded) transport, with key as the credential.
func (r *rig) call(t *testing.T, api, tool, key, args string) (any, error) {
	t.Helper()
	ctx := context.Background()
	tools, err := r.svc.Tools(ctx, r.admin, api)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name != tool {
			continue
		}
		spec, _ := r.svc.reg.Provider(Provider)
		c := &providers.Call{Tenant: r.admin.TenantID, HTTP: providers.NewClient(spec, r.transports.For(Provider), staticToken(key), nil)}
		return tl.Op.Invoke(ctx, c, []byte(args))
	}
	t.Fatalf("no tool %s among %d", tool, len(tools))
	return nil, nil
}

func staticToken(key string) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: key, TokenType: "Bearer"})
}
