package mcpadapter

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/mark3labs/mcp-go/server"
)

// requestIDSpace bounds the first id of a scope's server-to-client requests: below
// 2^52, so that every id stays an exact integer in a JavaScript client (2^53) after
// billions of requests.
const requestIDSpace = 1 << 52

// seedRequestIDs starts the ids of srv's server-to-client requests (elicitations,
// sampling, pings) at a random point. mcp-go numbers them from 1 in each
// StreamableHTTPServer, and every node builds its own server for a scope, so two
// nodes holding one session would ask its client two questions under one id, and an
// answer relayed between nodes (serveSession) would settle both: one confirmation
// accepted by the answer to another. From random starting points in 2^52, two
// pending requests of a session share an id with negligible probability.
//
// mcp-go v1.2 has no option for it, so the counter is set through reflection; a
// mcp-go whose server lacks the field fails here, loudly, at the scope's first build
// (so in every test that builds one), instead of silently numbering from 1 again.
func seedRequestIDs(srv *server.StreamableHTTPServer) error {
	f := reflect.ValueOf(srv).Elem().FieldByName("requestIDCounter")
	if !f.IsValid() || f.Type() != reflect.TypeOf(atomic.Int64{}) {
		return fmt.Errorf("seed server-to-client request ids: mcp-go's StreamableHTTPServer has no requestIDCounter atomic.Int64")
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("seed server-to-client request ids: %w", err)
	}
	counter := (*atomic.Int64)(unsafe.Pointer(f.UnsafeAddr()))
	counter.Store(int64(binary.LittleEndian.Uint64(b[:]) % requestIDSpace))
	return nil
}
