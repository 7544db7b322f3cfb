package connections_test

import (
	"context"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestConnectionLabels: a label may not be a connection's id or read like one (the
// connection argument takes ids too), nor look like the label of another connection
// of its provider that the same people see while being spelled differently (a
// Cyrillic "о" for a Latin "o"); either is refused naming the label field, on connect
// and on rename, before the provider is asked and with nothing stored.
func TestConnectionLabels(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		fake := func(r *serviceRig, owner switchboard.Principal, shared bool, label string) connections.Connection {
			t.Helper()
			c := connections.Connection{OwnerUserID: owner.UserID, Provider: "fake", AuthKind: providers.AuthAPIKey, AccountID: "acct-" + label, AccountLabel: label, Shared: shared}
			if err := r.store.Create(ctx, owner.TenantID, &c, connections.Credentials{AccessToken: "tok"}); err != nil {
				t.Fatal(err)
			}
			return c
		}
		tests := []struct {
			name    string
			shared  bool
			label   func(r *serviceRig) string
			says    string // "" when the label is taken
			upcalls int    // requests the provider must have received
		}{
			{name: "another member's private connection id", label: func(r *serviceRig) string { return r.a.annPrivate.ID }, says: "read like an id"},
			{name: "a connection id in a sentence", label: func(r *serviceRig) string { return "Work Slack (" + r.a.share.ID + ")" }, says: "read like an id"},
			{name: "a fresh id of any kind", label: func(*serviceRig) string { return switchboard.NewID("usr") }, says: "read like an id"},
			{name: "an id spelled with a Cyrillic о", label: func(r *serviceRig) string { return strings.Replace(r.a.annPrivate.ID, "o", "о", 1) }, says: "read like an id"},
			{name: "an id of the other tenant", label: func(r *serviceRig) string { return r.b.annPrivate.ID }, says: "read like an id"},
			{name: "a shared label with a Cyrillic о", label: func(*serviceRig) string { return "Wоrk Slack" }, says: "looks like the label of another fake connection"},
			{name: "a shared label with a Greek Ο and another case", label: func(*serviceRig) string { return "wΟrk slack" }, says: "looks like the label of another fake connection"},
			{name: "a shared label with a zero-width space", label: func(*serviceRig) string { return "Work\u200b Slack" }, says: "looks like the label of another fake connection"},
			{name: "a shared label with a digit for a letter", label: func(*serviceRig) string { return "W0rk Slack" }, says: "looks like the label of another fake connection"},
			{name: "one's own label with a Cyrillic е", label: func(*serviceRig) string { return "Bob's nеtwork" }, says: "looks like the label of another fake connection"},
			{name: "a shared connection like someone's private label", shared: true, label: func(*serviceRig) string { return "Аnn's private" }, says: "looks like the label of another fake connection"},
			{name: "the very same label as a shared one", label: func(*serviceRig) string { return "Work Slack" }, upcalls: 1},
			{name: "a private label like someone else's private one", label: func(*serviceRig) string { return "Аnn's private" }, upcalls: 1},
			{name: "a label that reads differently", label: func(*serviceRig) string { return "Work Slack 2" }, upcalls: 1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := newServiceRig(t, db)
				fake(r, r.a.ann, true, "Work Slack")
				fake(r, r.a.ann, false, "Ann's private")
				fake(r, r.a.bob, false, "Bob's network")
				fake(r, r.a.ann, true, "Work Notes") // the same label of another provider does not count
				before, err := r.store.List(ctx, r.a.id)
				if err != nil {
					t.Fatal(err)
				}
				label := tt.label(r)
				c, err := r.svc.Connect(ctx, r.a.bob, connections.ConnectInput{Provider: "fake", Token: goodToken, Label: &label, Shared: tt.shared})
				if n := len(r.upstream.received()); n != tt.upcalls {
					t.Errorf("the provider got %d requests, want %d", n, tt.upcalls)
				}
				if tt.says == "" {
					if err != nil || c.AccountLabel != label {
						t.Fatalf("Connect(%q) = %q, %v; want it taken", label, c.AccountLabel, err)
					}
					return
				}
				e := switchboard.AsError(err)
				if err == nil || e.Code != switchboard.CodeInvalid || e.Field != "label" || !strings.Contains(e.Message, tt.says) {
					t.Fatalf("Connect(%q) = %v; want an invalid label error saying %q", label, err, tt.says)
				}
				if strings.Contains(e.Message, "Ann") || strings.Contains(e.Message, r.a.annPrivate.ID) {
					t.Errorf("the refusal %q names another member's connection", e.Message)
				}
				after, err := r.store.List(ctx, r.a.id)
				if err != nil {
					t.Fatal(err)
				}
				if len(after) != len(before) {
					t.Errorf("%d connections stored, want none", len(after)-len(before))
				}
			})
		}
	})
}

// TestRenameToALookAlikeLabel: reconnecting with a new label is checked like a new
// connection's; the connection's own label, kept or given again, is not a clash.
func TestRenameToALookAlikeLabel(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newServiceRig(t, db)
		mine, err := r.svc.Connect(ctx, r.a.bob, connections.ConnectInput{Provider: "fake", Token: goodToken})
		if err != nil {
			t.Fatal(err)
		}
		shared := connections.Connection{OwnerUserID: r.a.ann.UserID, Provider: "fake", AuthKind: providers.AuthAPIKey, AccountID: "7", AccountLabel: "Work Slack", Shared: true}
		if err := r.store.Create(ctx, r.a.id, &shared, connections.Credentials{AccessToken: "tok"}); err != nil {
			t.Fatal(err)
		}
		for _, label := range []string{"Wоrk Slack", shared.ID} {
			_, err := r.svc.Reconnect(ctx, r.a.bob, mine.ID, connections.ReconnectInput{Token: goodToken, Label: &label})
			if e := switchboard.AsError(err); err == nil || e.Code != switchboard.CodeInvalid || e.Field != "label" {
				t.Errorf("rename to %q: %v, want an invalid label error", label, err)
			}
		}
		got, err := r.svc.Get(ctx, r.a.bob, mine.ID)
		if err != nil || got.AccountLabel != "octocat" || got.Version != mine.Version {
			t.Fatalf("after the refusals: %q version %d (%v), want octocat unchanged at version %d", got.AccountLabel, got.Version, err, mine.Version)
		}
		for _, label := range []string{"octocat", "Octocat at work"} {
			if c, err := r.svc.Reconnect(ctx, r.a.bob, mine.ID, connections.ReconnectInput{Token: goodToken, Label: &label}); err != nil || c.AccountLabel != label {
				t.Errorf("rename to %q = %q, %v; want it taken", label, c.AccountLabel, err)
			}
		}
	})
}
