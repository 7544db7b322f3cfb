package mcptransport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// Work that ends its exchange has its response complete at once, with what it wrote
// before; it runs on, and what it writes after goes nowhere.
func TestEndExchangeCompletesTheResponseAndTheWorkRunsOn(t *testing.T) {
	t.Parallel()
	proceed, finished := make(chan struct{}), make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ServeOutliving(w, r, nil, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "before\n")
			w.(http.Flusher).Flush()
			if !Outlives(r.Context()) || !EndExchange(r.Context()) {
				finished <- "EndExchange reported no exchange"
				return
			}
			if Outlives(r.Context()) || EndExchange(r.Context()) {
				finished <- "EndExchange ended the exchange twice"
				return
			}
			<-proceed
			n, err := io.WriteString(w, "after\n")
			w.Header().Set("X-After", "1")
			finished <- strings.Repeat("x", n) + errString(err)
		})
	}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body) // ends only if the exchange did, the work still waiting
	resp.Body.Close()
	if err != nil || string(body) != "before\n" {
		t.Fatalf("body %q (%v), want what the work wrote before the end", body, err)
	}
	close(proceed)
	if got := testwait.Recv(t, finished, "the work to run on after the end"); got != "xxxxxx" {
		t.Errorf("the work after the end: %q, want its writes taken and dropped", got)
	}
}

// Work served outside ServeOutliving has no exchange to end.
func TestEndExchangeWithoutOutlivingWork(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	if Outlives(r.Context()) || EndExchange(r.Context()) {
		t.Error("EndExchange ended a request not served by ServeOutliving")
	}
}

func errString(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}
