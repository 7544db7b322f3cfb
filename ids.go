package switchboard

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"time"
)

// idEncoding's alphabet is in ascending byte order, so encoded IDs sort as their bytes do.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a new random identifier with a prefix that says what it names,
// for example "con_5k2…" for a connection: 128 random bits, lower-case base32.
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// NewOrderedID is NewID for rows written at a high rate, such as audit events: the
// first 48 of its 128 bits are at's Unix time in milliseconds and the other 80 are
// random, so the IDs of later times sort after (as strings) and a table's index on
// them grows at its end. A random key lands each new row on another page of the
// index, and every page a transaction changes is written out again (a WAL frame in
// SQLite): with ordered keys a batch of rows changes one or two pages of the index
// instead of one per row.
func NewOrderedID(prefix string, at time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(at.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// RandomToken returns n random bytes encoded in the same alphabet, for secrets
// such as API keys and OAuth states.
func RandomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return idEncoding.EncodeToString(b)
}
