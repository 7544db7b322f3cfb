package limits_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
)

// TestBodyBudgetShares: a body is counted for its declared length (a chunked one for
// its route's bound) against the total, its client address's quarter of it and, for a
// public body, its pool's eighth and the address's eighth of that (at least one body
// of the route's bound); a public body declared over its route's bound is refused
// before it is counted, and what is given back can be taken again.
func TestBodyBudgetShares(t *testing.T) {
	t.Parallel()
	const kb = 1 << 10
	type req struct {
		source string
		pool   string // "" for a body of an authenticated caller
		limit  int64
		length int64 // -1: chunked
	}
	tests := []struct {
		name     string
		held     []req
		next     req
		wantCode switchboard.Code // "" when it fits
		tooLarge bool
		wantUse  int64 // in use once next is counted (or refused)
	}{
		{name: "declared length", next: req{"a", "", 0, 200 * kb}, wantUse: 200 * kb},
		{name: "declared over the per-request bound", next: req{"a", "", 0, 300 * kb}, wantUse: 256 * kb},
		{name: "chunked counts as the per-request bound", next: req{"a", "", 0, -1}, wantUse: 256 * kb},
		{name: "an address's quarter", held: []req{{"a", "", 0, 256 * kb}, {"a", "", 0, 256 * kb}}, next: req{"a", "", 0, 1}, wantCode: switchboard.CodeRateLimited, wantUse: 512 * kb},
		{name: "another address within the total", held: []req{{"a", "", 0, 256 * kb}, {"a", "", 0, 256 * kb}}, next: req{"b", "", 0, 256 * kb}, wantUse: 768 * kb},
		{name: "the total", held: []req{{"a", "", 0, 256 * kb}, {"a", "", 0, 256 * kb}, {"b", "", 0, 256 * kb}, {"b", "", 0, 256 * kb}, {"c", "", 0, 256 * kb}, {"c", "", 0, 256 * kb}, {"d", "", 0, 256 * kb}, {"d", "", 0, 200 * kb}},
			next: req{"e", "", 0, 100 * kb}, wantCode: switchboard.CodeUnavailable, wantUse: 1992 * kb},
		{name: "public over its route's bound", next: req{"a", "forms", 0, 65 * kb}, tooLarge: true},
		{name: "public chunked counts as its route's bound", next: req{"a", "forms", 0, -1}, wantUse: 64 * kb},
		{name: "an address's share of a pool", held: []req{{"a", "forms", 0, 40 * kb}}, next: req{"a", "forms", 0, 40 * kb}, wantCode: switchboard.CodeRateLimited, wantUse: 40 * kb},
		{name: "one body of the route's bound always fits an address", next: req{"a", "webhooks", 100 * kb, 100 * kb}, wantUse: 100 * kb},
		{name: "a pool's eighth", held: []req{{"a", "forms", 0, 64 * kb}, {"b", "forms", 0, 64 * kb}, {"c", "forms", 0, 64 * kb}, {"d", "forms", 0, 64 * kb}}, next: req{"e", "forms", 0, 1}, wantCode: switchboard.CodeUnavailable, wantUse: 256 * kb},
		{name: "another pool", held: []req{{"a", "forms", 0, 64 * kb}, {"b", "forms", 0, 64 * kb}, {"c", "forms", 0, 64 * kb}, {"d", "forms", 0, 64 * kb}}, next: req{"e", "webhooks", 0, 64 * kb}, wantUse: 320 * kb},
		{name: "an authenticated body beside a full pool", held: []req{{"a", "forms", 0, 64 * kb}, {"b", "forms", 0, 64 * kb}, {"c", "forms", 0, 64 * kb}, {"d", "forms", 0, 64 * kb}}, next: req{"e", "", 0, 256 * kb}, wantUse: 512 * kb},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := limits.NewBodyBudget(2<<20, 256*kb) // an address 512 KiB; a pool 256 KiB, 32 KiB of it (64 KiB, a form's bound) an address
			reserve := func(r req) (func(), error) {
				hr := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
				hr.ContentLength = r.length
				hr = hr.WithContext(limits.WithSource(context.Background(), r.source))
				if r.pool == "" {
					return b.Reserve(httptest.NewRecorder(), hr)
				}
				return b.ReservePublic(httptest.NewRecorder(), hr, r.pool, r.limit)
			}
			var releases []func()
			for _, h := range tt.held {
				release, err := reserve(h)
				if err != nil {
					t.Fatalf("held %+v: %v", h, err)
				}
				releases = append(releases, release)
			}
			release, err := reserve(tt.next)
			var tooLarge *http.MaxBytesError
			switch {
			case tt.tooLarge:
				if !errors.As(err, &tooLarge) {
					t.Fatalf("err %v, want an *http.MaxBytesError", err)
				}
			case tt.wantCode == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantCode != "" && (switchboard.CodeOf(err) != tt.wantCode || switchboard.AsError(err).RetryAfter <= 0):
				t.Fatalf("err %v, want %s with a retry delay", err, tt.wantCode)
			}
			if got := b.InUse(); got != tt.wantUse {
				t.Errorf("in use %d, want %d", got, tt.wantUse)
			}
			if release != nil {
				release()
				release() // twice gives back once
			}
			for _, r := range releases {
				r()
			}
			if got := b.InUse(); got != 0 {
				t.Errorf("in use after every release %d, want 0", got)
			}
			if _, err := reserve(req{"a", "", 0, 256 * kb}); err != nil {
				t.Errorf("a body after every release: %v", err)
			}
		})
	}
}
