package identity

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/keyring"
)

// TestSigningKeyRotation checks the access token signing keys under `keys rotate`: the
// private key is stored sealed, never in the clear; a keyring rotation re-seals it;
// retiring the keys makes new tokens carry a new key, while a token signed before still
// verifies (until it expires) on a node that starts afresh.
func TestSigningKeyRotation(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	kr, err := keyring.NewLocalKeyring("k1", map[string][]byte{"k1": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	r.srv.o.Keyring, r.srv.keys = kr, newSigningKeys(r.db, kr)
	resource := ResourceURL(r.base, "acme", "")
	_, before := r.tokens(r.signIn(r.acme, r.ada), resource)
	var keys []signingKey
	r.db.Find(&keys)
	if len(keys) != 1 || keys[0].KeyID != "k1" || strings.Contains(string(keys[0].Sealed), "PRIVATE") || len(keys[0].Sealed) < 100 {
		t.Fatalf("signing keys %+v", keys)
	}
	res, err := keyring.Rotate(ctx, r.db, kr, []keyring.SealedRecords{SealedRecords(r.db, kr)}, keyring.RotateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resealed != 1 {
		t.Errorf("re-sealed %d signing keys, want 1", res.Resealed)
	}
	n, err := RetireSigningKeys(ctx, r.db, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("retired %d, %v", n, err)
	}
	// A node that starts now: nothing cached.
	fresh := New(Options{DB: r.db, Keyring: kr, PublicURL: r.base, Sessions: r.sess, Agents: r.agents, Logger: slog.New(slog.DiscardHandler)})
	if _, err := fresh.AuthenticateToken(ctx, before["access_token"].(string), resource); err != nil {
		t.Errorf("token signed before the rotation: %v", err)
	}
	var g Grant
	r.db.Where("tenant_id = ?", r.acme.ID).Take(&g)
	after, err := fresh.issueAccessToken(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.AuthenticateToken(ctx, after, resource); err != nil {
		t.Errorf("token signed after the rotation: %v", err)
	}
	keys = nil
	r.db.Order("created_at").Find(&keys)
	if len(keys) != 2 || keys[0].KeyID != res.KeyID || keys[0].RetiredAt == nil || keys[1].RetiredAt != nil || keys[1].KeyID != res.KeyID {
		t.Errorf("signing keys after the rotation %+v, want the old one re-sealed under %s and retired, a new live one", keys, res.KeyID)
	}
}
