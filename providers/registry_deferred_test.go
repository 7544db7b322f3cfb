package providers

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRegistryDeferred: providers named while wiring and loaded later are waited for by
// the lookups that need them, bounded by the caller's context where it has one; one
// that fails to load answers its error, naming its source; the eager ones never wait.
func TestRegistryDeferred(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	if err := r.Register(fakeSpec("fake", echoOp("echo", Hints{}))); err != nil {
		t.Fatal(err)
	}
	if err := r.Defer(map[string]string{"fake": "fake.json"}); err == nil {
		t.Error("a deferred name that an eager provider has was accepted")
	}
	if err := r.Defer(map[string]string{"inventory": "inventory.json", "broken": "broken.json", "twin": "twin.json"}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetRateLimit("inventory", RateLimit{PerSecond: 2, Burst: 3}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetBaseURL("inventory", "https://stock.example.test"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.ReservedPrefix("inventory_x"); !ok {
		t.Error("a deferred provider's name is not reserved while it loads")
	}

	// While the load is held: the eager provider answers at once, a deferred one's
	// lookup with a context ends with it.
	if _, ok := r.Tool("fake_echo"); !ok {
		t.Fatal("the eager tool is missing while the others load")
	}
	if _, ok := r.Tool("nothing_here"); ok {
		t.Fatal("an unknown tool was found")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.AwaitTool(ctx, "inventory_echo"); !errors.Is(err, context.Canceled) {
		t.Errorf("AwaitTool with a canceled context while loading = %v, want its error", err)
	}
	if err := r.AwaitTool(ctx, "fake_echo"); err != nil {
		t.Errorf("AwaitTool of an eager tool = %v, want nil at once", err)
	}

	release := make(chan struct{})
	found := make(chan bool, 1)
	go func() {
		_, ok := r.Tool("inventory_echo") // asked during the load
		found <- ok
	}()
	var reported []string
	go func() {
		<-release
		r.Load(func(name, _ string) (Spec, error) {
			switch name {
			case "broken":
				return Spec{}, errors.New("no info object")
			case "twin":
				return fakeSpec("twin", echoOp("echo", Hints{}), echoOp("echo", Hints{})), nil
			}
			s := fakeSpec(name, echoOp("echo", Hints{}))
			s.RateLimit.MaxWait = 7
			return s, nil
		}, func(name, source string, err error) { reported = append(reported, source) })
	}()
	close(release)
	if !<-found {
		t.Fatal("a tool asked for during the load is missing after it")
	}
	if err := r.Loaded(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(reported, ",") != "broken.json,twin.json" {
		t.Errorf("reported %v, want broken.json and twin.json", reported)
	}
	spec, ok := r.Provider("inventory")
	if !ok || spec.RateLimit != (RateLimit{PerSecond: 2, Burst: 3, MaxWait: 7}) || r.BaseURL("inventory") != "https://stock.example.test" {
		t.Errorf("inventory = %v %+v %s, want its rate limit and base URL overrides", ok, spec, r.BaseURL("inventory"))
	}
	if got := len(r.Providers()); got != 2 {
		t.Errorf("%d providers, want fake and inventory", got)
	}
	if err := r.AwaitTool(context.Background(), "broken_echo"); err == nil || !strings.Contains(err.Error(), "broken.json") || !strings.Contains(err.Error(), "no info object") {
		t.Errorf("a tool of the broken provider = %v, want its error naming broken.json", err)
	}
	if _, ok := r.Tool("twin_echo"); ok {
		t.Error("a provider that failed to register left a tool behind")
	}
}
