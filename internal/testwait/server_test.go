package testwait_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestCloseServerEndsHeldStreams: a client that holds a stream open, and opens
// another as soon as one ends, does not keep CloseServer from returning (srv.Close
// alone would wait for its handler for ever).
func TestCloseServerEndsHeldStreams(t *testing.T) {
	opened := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case opened <- struct{}{}:
		default:
		}
		<-r.Context().Done() // a stream: it ends only when its connection does
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil { // reconnect at once, like a notification stream
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			res, err := srv.Client().Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
	}()
	testwait.Recv(t, opened, "the client's stream to open")
	testwait.CloseServer(t, srv)
}
