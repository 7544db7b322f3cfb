package testwait

import (
	"net/http/httptest"
	"testing"
	"time"
)

// CloseServer closes srv even while clients hold streams open on it: it stops
// accepting, then keeps closing the client connections until Close, which waits for
// every handler to return, is done. A client that connects while the server shuts
// down (a notification stream re-opened by a session the test has not closed yet)
// would otherwise hold Close, and the package, until go test's -timeout. It fails
// after Timeout naming the server.
func CloseServer(tb testing.TB, srv *httptest.Server) {
	tb.Helper()
	_ = srv.Listener.Close()
	done := make(chan struct{})
	go func() {
		srv.Close()
		close(done)
	}()
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		srv.CloseClientConnections()
		select {
		case <-done:
			return
		case <-deadline.C:
			tb.Fatalf("test server %s still had handlers running %s after it was closed", srv.URL, Timeout)
		case <-tick.C:
		}
	}
}
