package openapi

import (
	"fmt"
	"strings"
	"unicode"
)

// maxToolName is MCP's bound on a tool name.
const maxToolName = 64

// snake turns an operation id or a method and path ("listPets", "GET /pets/{id}") into
// lower-case snake_case of [a-z0-9] words: the shape of the hub's tool names.
func snake(s string) string {
	var b strings.Builder
	prevLower := false
	sep := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	for _, r := range s {
		switch {
		case r < unicode.MaxASCII && unicode.IsUpper(r):
			if prevLower {
				sep()
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case r < unicode.MaxASCII && (unicode.IsLower(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
			prevLower = true
		default:
			sep()
			prevLower = false
		}
	}
	return strings.Trim(b.String(), "_")
}

// namer hands out unique tool names {provider}_{operation} of at most 64 characters.
type namer struct {
	prefix string
	taken  map[string]bool
}

func newNamer(provider string) *namer {
	return &namer{prefix: provider + "_", taken: map[string]bool{}}
}

// name returns the operation's tool name: its snake_case, cut to fit, with a number
// added when an earlier operation took it.
func (n *namer) name(operation string) string {
	base := snake(operation)
	if base == "" {
		base = "operation"
	}
	name := n.fit(base, "")
	for i := 2; n.taken[name]; i++ {
		name = n.fit(base, fmt.Sprintf("_%d", i))
	}
	n.taken[name] = true
	return name
}

func (n *namer) fit(base, suffix string) string {
	room := maxToolName - len(n.prefix) - len(suffix)
	if len(base) > room {
		base = strings.TrimRight(base[:room], "_")
	}
	return n.prefix + base + suffix
}
