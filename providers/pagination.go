package providers

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// PageInput is embedded in the input of every list operation: the same cursor and limit
// whatever the upstream's own style (Slack cursors, GitHub Link headers, offsets).
type PageInput struct {
	Cursor *string `json:"cursor,omitempty" jsonschema:"The previous page's next_cursor, with the other arguments unchanged; omit for the first page" schema:"example=eyJwIjoyfQ"`
	Limit  *int    `json:"limit,omitempty" jsonschema:"Items per page" schema:"minimum=1,maximum=100,default=30"`
}

// LimitOr returns the requested limit, or def when none was given.
func (p PageInput) LimitOr(def int) int {
	if p.Limit == nil {
		return def
	}
	return *p.Limit
}

// DecodedCursor returns the upstream position the cursor stands for ("" for the first
// page); a cursor this hub did not hand out is an invalid error on the cursor field.
func (p PageInput) DecodedCursor() (string, error) {
	if p.Cursor == nil || *p.Cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
	if err != nil || !strings.HasPrefix(string(b), cursorMagic) {
		return "", switchboard.Invalid("cursor", "is not a cursor this tool returned; pass next_cursor from the previous page, or omit it")
	}
	return strings.TrimPrefix(string(b), cursorMagic), nil
}

const cursorMagic = "sb1:"

// EncodeCursor wraps an upstream position (a Slack cursor, a GitHub page number) into
// the opaque next_cursor a list operation returns; "" stays "" (no more pages).
func EncodeCursor(position string) string {
	if position == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(cursorMagic + position))
}

// NextLink returns the URL of the Link header's rel="next" (RFC 8288), or "".
func NextLink(h http.Header) string {
	for _, v := range h.Values("Link") {
		for link := range strings.SplitSeq(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(link), ";")
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for p := range strings.SplitSeq(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && strings.Contains(" "+strings.Trim(val, `"`)+" ", " next ") {
					return target[1 : len(target)-1]
				}
			}
		}
	}
	return ""
}
