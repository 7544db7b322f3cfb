package sessions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/sessions"
)

func streamLog(t *testing.T, db *gorm.DB, now *time.Time) *sessions.StreamLog {
	t.Helper()
	kr, err := keyring.NewLocalKeyring("k1", map[string][]byte{"k1": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	l := sessions.NewStreamLog(db, kr)
	l.Now = func() time.Time { return *now }
	return l
}

func messages(events []sessions.StreamEvent) []string {
	var out []string
	for _, ev := range events {
		switch {
		case ev.Last:
			out = append(out, "(end)")
		case ev.Message == nil:
			out = append(out, "(priming)")
		default:
			out = append(out, string(ev.Message))
		}
	}
	return out
}

// A call's stream kept by one node is read by any other on the same database: the
// events after an id, in order, up to the stream's end; only by the session's tenant;
// the messages sealed at rest.
func TestStreamLogKeepsACallsStreamForAnyNode(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		now := t0
		l := streamLog(t, db, &now)
		answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"secret-ish"}]}}`
		if err := l.Append(ctx, "ten_a", "mcs_1", "evA_call-1", []sessions.StreamEvent{
			{ID: "evA_1", Seq: 0},
			{ID: "evA_2", Seq: 1, Message: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/progress"}`)},
		}); err != nil {
			t.Fatal(err)
		}
		if err := l.Append(ctx, "ten_a", "mcs_1", "evA_call-1", []sessions.StreamEvent{
			{ID: "evA_5", Seq: 2, Message: json.RawMessage(answer)},
			{ID: "evA_call-1_end", Seq: 3, Last: true},
		}); err != nil {
			t.Fatal(err)
		}
		// Another call of the same session, on another stream.
		if err := l.Append(ctx, "ten_a", "mcs_1", "evA_call-2", []sessions.StreamEvent{{ID: "evA_3", Seq: 0, Message: json.RawMessage(`{"other":1}`)}}); err != nil {
			t.Fatal(err)
		}

		events, found, err := l.After(ctx, "ten_a", "mcs_1", "evA_1")
		if err != nil || !found {
			t.Fatalf("After the priming event: found %v, err %v", found, err)
		}
		if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","method":"notifications/progress"}`, answer, "(end)"}, messages(events)); diff != "" {
			t.Errorf("events after the priming event (-want +got):\n%s", diff)
		}
		events, _, _ = l.After(ctx, "ten_a", "mcs_1", "evA_2")
		if diff := cmp.Diff([]string{answer, "(end)"}, messages(events)); diff != "" {
			t.Errorf("events after the progress (-want +got):\n%s", diff)
		}
		for _, c := range []struct{ tenant, session, id string }{
			{"ten_b", "mcs_1", "evA_1"}, // another tenant
			{"ten_a", "mcs_2", "evA_1"}, // another session
			{"ten_a", "mcs_1", "evB_1"}, // an id never kept
		} {
			if events, found, err := l.After(ctx, switchboard.TenantID(c.tenant), c.session, c.id); err != nil || found || len(events) != 0 {
				t.Errorf("After(%s, %s, %s) = %v, %v, %v; want nothing found", c.tenant, c.session, c.id, events, found, err)
			}
		}
		var sealed [][]byte
		if err := db.Table("mcp_stream_events").Where("id = ?", "evA_5").Pluck("message_sealed", &sealed).Error; err != nil {
			t.Fatal(err)
		}
		if len(sealed) != 1 || strings.Contains(string(sealed[0]), "secret-ish") {
			t.Errorf("the answer is not sealed at rest: %q", sealed)
		}
	})
}

// A stream keeps its newest MaxEvents events within MaxBytes (the newest always), and
// nothing older than MaxAge stays once pruned.
func TestStreamLogIsBounded(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		now := t0
		l := streamLog(t, db, &now)
		l.MaxEvents, l.MaxBytes = 4, 1000
		for i := range 6 {
			if err := l.Append(ctx, "ten_a", "mcs_1", "s1", []sessions.StreamEvent{{ID: fmt.Sprintf("e%d", i), Seq: i, Message: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, found, _ := l.After(ctx, "ten_a", "mcs_1", "e1"); found {
			t.Error("the stream holds more than its newest 4 events")
		}
		events, found, _ := l.After(ctx, "ten_a", "mcs_1", "e2")
		if diff := cmp.Diff([]string{`{"n":3}`, `{"n":4}`, `{"n":5}`}, messages(events)); !found || diff != "" {
			t.Errorf("events after e2 (found %v, -want +got):\n%s", found, diff)
		}
		big := json.RawMessage(`"` + strings.Repeat("x", 1200) + `"`)
		if err := l.Append(ctx, "ten_a", "mcs_1", "s1", []sessions.StreamEvent{{ID: "big", Seq: 6, Message: big}}); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := l.After(ctx, "ten_a", "mcs_1", "e5"); found {
			t.Error("the stream holds older events beside a newest one over its byte bound")
		}
		if _, found, _ := l.After(ctx, "ten_a", "mcs_1", "big"); !found {
			t.Error("the newest event went with the byte bound")
		}

		if err := l.Append(ctx, "ten_a", "mcs_1", "s2", []sessions.StreamEvent{{ID: "later", Seq: 0}}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(sessions.DefaultStreamAge / 2)
		if err := l.Append(ctx, "ten_a", "mcs_1", "s3", []sessions.StreamEvent{{ID: "fresh", Seq: 0}}); err != nil {
			t.Fatal(err)
		}
		if err := l.Prune(ctx, t0.Add(sessions.DefaultStreamAge+time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := l.After(ctx, "ten_a", "mcs_1", "later"); found {
			t.Errorf("an event kept longer than %v is still there after Prune", sessions.DefaultStreamAge)
		}
		if _, found, _ := l.After(ctx, "ten_a", "mcs_1", "fresh"); !found {
			t.Error("Prune took an event younger than the age bound")
		}
	})
}
