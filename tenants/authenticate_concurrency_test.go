package tenants_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/tenants"
)

// callers is how many clients behind one address authenticate at once.
const callers = 256

// gateQueries holds every SELECT db runs from now on until open is closed, and counts
// them.
func gateQueries(t *testing.T, db *gorm.DB, open <-chan struct{}) *atomic.Int64 {
	t.Helper()
	n := &atomic.Int64{}
	if err := db.Callback().Query().Before("gorm:query").Register("test:gate_queries", func(*gorm.DB) {
		n.Add(1)
		<-open
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// authenticateAtOnce has 256 callers, from one address, authenticate with keys[i %
// len(keys)] at once, on a node that has cached none of them: the database holds
// every lookup until all callers are under way. It returns the answers' codes ("" for
// a principal) and how many lookups reached the database.
func authenticateAtOnce(t *testing.T, db *gorm.DB, s *tenants.Store, keys []string) (map[switchboard.Code]int, int64) {
	t.Helper()
	open := make(chan struct{})
	queries := gateQueries(t, db, open)
	ctx := limits.WithSource(context.Background(), "203.0.113.9")
	var started, done sync.WaitGroup
	var mu sync.Mutex
	codes := map[switchboard.Code]int{}
	for i := range callers {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			_, err := s.Authenticate(ctx, keys[i%len(keys)])
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				codes[""]++
			} else {
				codes[switchboard.CodeOf(err)]++
			}
		}()
	}
	started.Wait()
	// Let the callers reach the database (or the lookup they share) before it answers.
	for range 100 {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	close(open)
	done.Wait()
	return codes, queries.Load()
}

// TestConcurrentCallersOfOneKey: 256 clients behind one address (a proxy) send the
// same valid key at once to a node that has not cached it: every one is accepted, and
// they share one lookup instead of sending the database 256.
func TestConcurrentCallersOfOneKey(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		setup := tenants.NewStore(db)
		f := newFixture(t, setup, "alpha")
		plain, _, err := setup.CreateKey(context.Background(), f.tenant.ID, f.member.ID, "ci", false)
		if err != nil {
			t.Fatal(err)
		}
		s := tenants.NewStore(db) // a fresh node: nothing cached
		t.Cleanup(s.Close)
		codes, queries := authenticateAtOnce(t, db, s, []string{plain})
		if diff := cmp.Diff(map[switchboard.Code]int{"": callers}, codes); diff != "" {
			t.Errorf("answers to %d callers of one valid key (-want +got):\n%s", callers, diff)
		}
		if queries != 1 {
			t.Errorf("%d callers of one key at once sent the database %d lookups, want 1", callers, queries)
		}
	})
}

// TestConcurrentCallersOfManyKeys: 256 clients behind one address send 64 valid keys
// and 64 unknown ones (twice the address's burst of unknown keys) at once: every valid
// key is accepted, each key is looked up once, and only unknown keys are refused.
func TestConcurrentCallersOfManyKeys(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		setup := tenants.NewStore(db)
		f := newFixture(t, setup, "alpha")
		var keys []string
		for i := range 64 {
			plain, _, err := setup.CreateKey(context.Background(), f.tenant.ID, f.member.ID, fmt.Sprintf("ci-%d", i), false)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, plain, plain[:4]+fmt.Sprintf("%012d", i)+plain[16:])
		}
		s := tenants.NewStore(db)
		t.Cleanup(s.Close)
		codes, queries := authenticateAtOnce(t, db, s, keys)
		if codes[""] != callers/2 {
			t.Errorf("%d of %d callers with valid keys were accepted; answers: %v", codes[""], callers/2, codes)
		}
		if got := codes[switchboard.CodeUnauthorized] + codes[switchboard.CodeRateLimited]; got != callers/2 {
			t.Errorf("%d of %d callers with unknown keys were refused; answers: %v", got, callers/2, codes)
		}
		if queries != int64(len(keys)) {
			t.Errorf("%d keys sent by %d callers at once cost %d lookups, want one each", len(keys), callers, queries)
		}
	})
}
