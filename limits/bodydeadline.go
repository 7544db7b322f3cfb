package limits

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// BodyDeadline gives r's body until d from now to arrive: a read after that fails and
// the connection is closed, so a client that sends a byte at a time cannot hold the
// request, and the budget it reserved, for long. The deadline is lifted once the body
// is read to its end, so the work that follows (and the server's watch for a closed
// connection) is not cut short; it stays when a read fails, so that the server, which
// reads what is left of a small body before it answers, is not held either. A
// ResponseWriter that cannot set deadlines (a test's
// recorder) leaves the body as it is.
func BodyDeadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, lift: sync.OnceFunc(func() { _ = rc.SetReadDeadline(time.Time{}) })}
}

// LiftBodyDeadline lifts the read deadline BodyDeadline set, for a request whose
// caller has shown its credentials: a large body then takes as long as it needs.
func LiftBodyDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

// deadlineBody lifts its connection's read deadline when the body ends.
type deadlineBody struct {
	io.ReadCloser
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.lift()
	}
	return n, err
}

// CloseUnread makes the server close the connection after its answer to a request
// refused before its body was read. Otherwise the server reads what is left of the body
// before it answers (until the body's read deadline), and a caller that never sends it
// holds the connection, and waits for its refusal, that long. Call it before the answer
// is written.
func CloseUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}
