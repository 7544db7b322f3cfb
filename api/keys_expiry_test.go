package api_test

import (
	"net/http"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestKeyExpiry: POST /api/keys takes expires_in_days (1 to 3650), answers and lists
// the expiry, and refuses a bad one naming the field without creating a key.
func TestKeyExpiry(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		type keyBody struct {
			ID        string     `json:"id"`
			ExpiresAt *time.Time `json:"expires_at"`
			Expired   bool       `json:"expired"`
		}
		var list struct {
			Keys []keyBody `json:"keys"`
		}
		w.want(w.member, http.MethodGet, "/api/keys", "", http.StatusOK, &list)
		before := len(list.Keys)
		for _, body := range []string{`{"name":"x","expires_in_days":0}`, `{"name":"x","expires_in_days":3651}`, `{"name":"x","expires_in_days":-3}`} {
			status, b := w.do(w.member, http.MethodPost, "/api/keys", body)
			if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != "expires_in_days" {
				t.Errorf("%s answered %d %+v, want 400 on expires_in_days", body, status, e)
			}
		}
		var created keyBody
		w.want(w.member, http.MethodPost, "/api/keys", `{"name":"for a month","expires_in_days":30}`, http.StatusCreated, &created)
		if want := time.Now().Add(30 * 24 * time.Hour); created.ExpiresAt == nil || created.ExpiresAt.Sub(want).Abs() > time.Minute || created.Expired {
			t.Errorf("the key expires at %v, want about %v", created.ExpiresAt, want)
		}
		w.want(w.member, http.MethodGet, "/api/keys", "", http.StatusOK, &list)
		if len(list.Keys) != before+1 {
			t.Errorf("%d keys after one good and three refused creations, want %d", len(list.Keys), before+1)
		}
	})
}
