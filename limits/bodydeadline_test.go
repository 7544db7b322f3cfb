package limits_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/limits"
)

// TestBodyDeadline: a body that stalls is cut off at its deadline (the handler's read
// fails and the request is answered); one read to its end lifts the deadline, so the
// work after it outlasts the deadline with its request still live.
func TestBodyDeadline(t *testing.T) {
	t.Parallel()
	const deadline = 100 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limits.BodyDeadline(w, r, deadline)
		if _, err := io.ReadAll(r.Body); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				http.Error(w, "the body came too slowly", http.StatusRequestTimeout)
				return
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(3 * deadline) // work that takes longer than the body had
		if err := r.Context().Err(); err != nil {
			http.Error(w, "canceled: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name, sent string
		want       int
	}{
		{name: "stalled", sent: "{", want: http.StatusRequestTimeout},
		{name: "whole", sent: "{\"a\": 1}\n", want: http.StatusNoContent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n"+tt.sent); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tt.want {
				t.Errorf("status %d (%s), want %d", res.StatusCode, b, tt.want)
			}
		})
	}
}
