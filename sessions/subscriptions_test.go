package sessions_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStoreKeepsSubscriptions: the URIs a session subscribed to are kept with its
// record, once each, in the order subscribed, until unsubscribed; another tenant's
// session of the same id is left alone.
func TestStoreKeepsSubscriptions(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		if _, err := s.Create(ctx, rec("mcs_a", "ten_a", "user:u1", t0), 100); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			uri string
			on  bool
		}{{"switchboard://flows/run_1", true}, {"switchboard://flows/run_2", true}, {"switchboard://flows/run_1", true},
			{"switchboard://runs/run_3", true}, {"switchboard://flows/run_2", false}, {"switchboard://flows/run_9", false}} {
			if err := s.SetSubscription(ctx, "ten_a", "mcs_a", c.uri, c.on); err != nil {
				t.Fatalf("subscription %s %v: %v", c.uri, c.on, err)
			}
		}
		_ = s.SetSubscription(ctx, "ten_b", "mcs_a", "switchboard://flows/run_4", true)
		got, err := s.Get(ctx, "ten_a", "mcs_a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"switchboard://flows/run_1", "switchboard://runs/run_3"}, got.Subscriptions); diff != "" {
			t.Errorf("subscriptions (-want +got):\n%s", diff)
		}
	})
}
