package switchboard

import (
	"crypto/rand"
	"encoding/base32"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a new random identifier with a prefix that says what it names,
// for example "con_5k2…" for a connection: 128 random bits, lower-case base32.
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// RandomToken returns n random bytes encoded in the same alphabet, for secrets
// such as API keys and OAuth states.
func RandomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return idEncoding.EncodeToString(b)
}
