package connections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestOAuthAppForPrecedence walks the OAuth app a tenant connects a provider with
// through every place it comes from: none (an error naming the environment variables
// and the settings where an app is added), the deployment's app the operator set (only
// the operator may set it; its secret is never listed), a tenant's own app (which wins
// for that tenant only), and the environment's (which the operator cannot override in
// the UI).
func TestOAuthAppForPrecedence(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		// The deployment's apps are no tenant's: a provider of this test's own keeps
		// tests that share the database apart.
		name := fmt.Sprintf("opapp_%d", time.Now().UnixNano())
		envName := name + "_env"
		reg := providers.NewRegistry()
		for _, n := range []string{name, envName} {
			spec := fakeSpec(n, providers.AuthOAuth2)
			spec.Title = "Mail " + n
			spec.OAuth = &providers.OAuth2{AuthURL: "https://auth.example.com/authorize", TokenURL: "https://auth.example.com/token", Scopes: []string{"mail.read"}}
			if err := reg.Register(spec); err != nil {
				t.Fatal(err)
			}
		}
		svc := connections.NewService(w.store, reg, &providers.Transports{}, nil)
		svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "https://hub.example.com/oauth/callback",
			Apps: map[string]connections.OAuthApp{envName: {ClientID: "env-app", ClientSecret: "env-secret", TokenURL: "https://login.example.com/token"}}})
		operator := w.a.admin
		operator.Operator = true
		upper := strings.ToUpper(name)

		_, err := svc.OAuthAppFor(ctx, w.a.id, name)
		if e := switchboard.AsError(err); e == nil || e.Code != switchboard.CodeInvalid || e.Field != "provider" ||
			!strings.Contains(e.Message, "SWITCHBOARD_OAUTH_"+upper+"_CLIENT_ID") || !strings.Contains(e.Message, "Settings → OAuth apps") {
			t.Fatalf("with no app anywhere: %v; want invalid provider naming SWITCHBOARD_OAUTH_%s_CLIENT_ID and the workspace's settings", err, upper)
		}

		in := connections.OAuthAppInput{Provider: name, ClientID: "deploy-app", ClientSecret: "deploy-secret"}
		for _, p := range []switchboard.Principal{w.a.admin, w.a.ann} {
			if _, err := svc.SetDeploymentOAuthApp(ctx, p, in); switchboard.CodeOf(err) != switchboard.CodeForbidden {
				t.Errorf("%s (role %s, not the operator) set the deployment's app: %v; want forbidden", p.UserID, p.Role, err)
			}
		}
		if _, err := svc.DeploymentOAuthApps(ctx, w.a.admin); switchboard.CodeOf(err) != switchboard.CodeForbidden {
			t.Errorf("a tenant admin listed the deployment's apps: %v; want forbidden", err)
		}
		if _, err := svc.OAuthAppFor(ctx, w.a.id, name); switchboard.CodeOf(err) != switchboard.CodeInvalid {
			t.Fatalf("a refused set changed the app: %v", err)
		}
		for _, bad := range []struct {
			in    connections.OAuthAppInput
			field string
		}{
			{connections.OAuthAppInput{Provider: name, ClientID: " ", ClientSecret: "s"}, "client_id"},
			{connections.OAuthAppInput{Provider: name, ClientID: "id", ClientSecret: ""}, "client_secret"},
			{connections.OAuthAppInput{Provider: "fake", ClientID: "id", ClientSecret: "s"}, "provider"},
		} {
			if _, err := svc.SetDeploymentOAuthApp(ctx, operator, bad.in); switchboard.AsError(err) == nil || switchboard.AsError(err).Field != bad.field {
				t.Errorf("set %+v: %v; want invalid %s", bad.in, err, bad.field)
			}
		}

		info, err := svc.SetDeploymentOAuthApp(ctx, operator, in)
		if err != nil {
			t.Fatal(err)
		}
		if info.Source != connections.OAuthAppOperator || info.ClientID != "deploy-app" || info.Variable != "SWITCHBOARD_OAUTH_"+upper+"_CLIENT_ID" {
			t.Errorf("set answered %+v", info)
		}
		for _, tenant := range []switchboard.TenantID{w.a.id, w.b.id} {
			app, err := svc.OAuthAppFor(ctx, tenant, name)
			if err != nil || app.ClientID != "deploy-app" || app.ClientSecret != "deploy-secret" || app.Source != connections.OAuthAppOperator || app.AuthURL != "https://auth.example.com/authorize" {
				t.Errorf("tenant %s connects with %+v, %v; want the operator's deploy-app", tenant, app, err)
			}
		}

		if _, err := svc.SetOAuthApp(ctx, w.a.admin, connections.OAuthAppInput{Provider: name, ClientID: "tenant-app", ClientSecret: "tenant-secret"}); err != nil {
			t.Fatal(err)
		}
		if app, err := svc.OAuthAppFor(ctx, w.a.id, name); err != nil || app.ClientID != "tenant-app" || app.Source != connections.OAuthAppTenant {
			t.Errorf("tenant a, with its own app, connects with %+v, %v; want tenant-app", app, err)
		}
		if app, err := svc.OAuthAppFor(ctx, w.b.id, name); err != nil || app.ClientID != "deploy-app" {
			t.Errorf("tenant b connects with %+v, %v; want the operator's deploy-app", app, err)
		}

		if _, err := svc.SetDeploymentOAuthApp(ctx, operator, connections.OAuthAppInput{Provider: envName, ClientID: "ui-app", ClientSecret: "ui-secret"}); switchboard.CodeOf(err) != switchboard.CodeConflict {
			t.Errorf("the operator set in the UI an app the environment sets: %v; want conflict", err)
		}
		if app, err := svc.OAuthAppFor(ctx, w.b.id, envName); err != nil || app.ClientID != "env-app" || app.Source != connections.OAuthAppEnvironment || app.TokenURL != "https://login.example.com/token" {
			t.Errorf("the environment's app: %+v, %v", app, err)
		}

		list, err := svc.DeploymentOAuthApps(ctx, operator)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(list)
		if strings.Contains(string(raw), "secret") {
			t.Errorf("the list carries a secret: %s", raw)
		}
		got := map[string]string{}
		for _, d := range list {
			got[d.Provider] = string(d.Source) + " " + d.ClientID
		}
		if got[name] != "operator deploy-app" || got[envName] != "environment env-app" {
			t.Errorf("the list says %v", got)
		}
		if _, ok := got["fake"]; ok {
			t.Errorf("the list holds fake, which connects with no OAuth")
		}

		if err := svc.DeleteDeploymentOAuthApp(ctx, w.a.admin, name); switchboard.CodeOf(err) != switchboard.CodeForbidden {
			t.Errorf("a tenant admin removed the deployment's app: %v", err)
		}
		if err := svc.DeleteDeploymentOAuthApp(ctx, operator, name); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.OAuthAppFor(ctx, w.b.id, name); switchboard.CodeOf(err) != switchboard.CodeInvalid {
			t.Errorf("after the operator removed the app, tenant b: %v; want invalid (no app)", err)
		}
		if err := svc.DeleteDeploymentOAuthApp(ctx, operator, name); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("removing it again: %v; want not found", err)
		}
	})
}
