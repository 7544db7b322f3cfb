package providers

import (
	"net/http"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, pos := range []string{"dXNlcjpVMEc5V0ZYTlo=", "2", "page=3&x=y"} {
		c := EncodeCursor(pos)
		got, err := PageInput{Cursor: &c}.DecodedCursor()
		if err != nil || got != pos {
			t.Errorf("round trip of %q = %q, %v", pos, got, err)
		}
	}
	if EncodeCursor("") != "" {
		t.Error(`EncodeCursor("") must be "" (no more pages)`)
	}
	if got, err := (PageInput{}).DecodedCursor(); got != "" || err != nil {
		t.Errorf("no cursor = %q, %v; want first page", got, err)
	}
	bogus := "not-a-cursor"
	_, err := PageInput{Cursor: &bogus}.DecodedCursor()
	var e *switchboard.Error
	if !asError(err, &e) || e.Field != "cursor" || e.Code != switchboard.CodeInvalid {
		t.Errorf("bogus cursor error = %v, want invalid on field cursor", err)
	}
}

func asError(err error, target **switchboard.Error) bool {
	e, ok := err.(*switchboard.Error)
	*target = e
	return ok
}

func TestLimitOr(t *testing.T) {
	t.Parallel()
	n := 5
	if got := (PageInput{Limit: &n}).LimitOr(30); got != 5 {
		t.Errorf("LimitOr = %d, want 5", got)
	}
	if got := (PageInput{}).LimitOr(30); got != 30 {
		t.Errorf("LimitOr = %d, want 30", got)
	}
}

func TestNextLink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		link []string
		want string
	}{
		{name: "github style", link: []string{`<https://api.github.com/repositories/1/issues?page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last"`}, want: "https://api.github.com/repositories/1/issues?page=2"},
		{name: "next not first", link: []string{`<https://x/?page=1>; rel="prev", <https://x/?page=3>; rel="next"`}, want: "https://x/?page=3"},
		{name: "several rels in one", link: []string{`<https://x/?page=3>; rel="next last"`}, want: "https://x/?page=3"},
		{name: "last page", link: []string{`<https://x/?page=1>; rel="first", <https://x/?page=2>; rel="prev"`}},
		{name: "no header"},
		{name: "garbage", link: []string{`nonsense; rel=next`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for _, l := range tt.link {
				h.Add("Link", l)
			}
			if got := NextLink(h); got != tt.want {
				t.Errorf("NextLink = %q, want %q", got, tt.want)
			}
		})
	}
}
