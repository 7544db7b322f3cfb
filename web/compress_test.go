package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// rawGet fetches path with the session cookie and the Accept-Encoding given, without
// Go's transparent decompression, and returns the answer and its body as sent.
func rawGet(t *testing.T, url, acceptEncoding string, cookies ...*http.Cookie) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the gzip page does not decode: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the gzip page does not decode: %v", err)
	}
	return out
}

// TestPagesCompressedWithoutTheSecret checks that every page goes gzip-compressed to a
// browser that accepts it (plain to others), decoding to the same HTML, and that the
// CSRF token it carries is never compressed: it is in the stream as it is, and a URL
// that repeats the token's start makes an answer no smaller than one that does not,
// so the size of the answer does not leak the token (BREACH).
func TestPagesCompressedWithoutTheSecret(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com")
	token := acc.session(t)
	csrf := acc.CSRFToken(token)
	for _, path := range []string{"/", "/agents", "/agents/new", "/activity", "/settings", "/tools/x_y", "/signin"} {
		res, plain := rawGet(t, srv.URL+path, "", sessionCookie(token))
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%s without gzip: status %d, encoding %q", path, res.StatusCode, res.Header.Get("Content-Encoding"))
		}
		res, packed := rawGet(t, srv.URL+path, "gzip, deflate, br", sessionCookie(token))
		if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("%s: encoding %q, vary %q; want gzip, varying on Accept-Encoding", path, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
		}
		if got := gunzip(t, packed); !bytes.Equal(got, plain) {
			t.Errorf("%s: the gzip page decodes to another page", path)
		}
		if len(packed) >= len(plain) || (len(plain) > 4000 && len(packed)*2 > len(plain)) {
			t.Errorf("%s: %d bytes gzip-compressed, %d plain; want smaller, and under half for a page over 4 KB", path, len(packed), len(plain))
		}
		if path != "/signin" && !bytes.Contains(packed, []byte(csrf)) {
			t.Errorf("%s: the CSRF token is not stored uncompressed in the gzip stream", path)
		}
	}
	// A URL the attacker chose is reflected in the page (the agent ID). One that
	// matches the token's start costs no fewer bytes than ones that do not (hex strings
	// of the same length: their sizes differ by a byte or two of Huffman coding, where a
	// compressed match with the token would save about ten). Every other rotation of
	// the hex digits is tried, so the least of them spans that Huffman noise (with four,
	// a CI run once saw the token's start 2 bytes under the least).
	guess := csrf[len("csrf-") : len("csrf-")+12]
	_, hit := rawGet(t, srv.URL+"/agents/"+guess, "gzip", sessionCookie(token))
	least := 1 << 30
	for shift := 1; shift < 16; shift++ {
		miss := []byte(guess)
		for i, c := range miss {
			n := strings.IndexByte("0123456789abcdef", c)
			miss[i] = "0123456789abcdef"[(n+shift)%16]
		}
		_, other := rawGet(t, srv.URL+"/agents/"+string(miss), "gzip", sessionCookie(token))
		least = min(least, len(other))
	}
	if len(hit) < least-1 {
		t.Errorf("/agents/<the token's first 12 characters> answers %d bytes, /agents/<12 other hex digits> at least %d: the size leaks the token", len(hit), least)
	}
}

// TestStylesheetLinksAssetsByHash checks that the stylesheet names the logos it draws
// by content hash, so a warm page load takes them from the cache without asking.
func TestStylesheetLinksAssetsByHash(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, "https://hub.example.com")
	_, css := rawGet(t, srv.URL+"/static/style.css", "")
	refs := regexp.MustCompile(`url\("([^"]+)"\)`).FindAllStringSubmatch(string(css), -1)
	if len(refs) < 7 {
		t.Fatalf("the stylesheet names %d files, want the 7 logos at least", len(refs))
	}
	for _, m := range refs {
		ref := m[1]
		if !regexp.MustCompile(`^logos/[a-z]+\.svg\?v=[0-9a-f]{16}$`).MatchString(ref) {
			t.Errorf("the stylesheet names %q, not a content-hashed URL", ref)
			continue
		}
		res, body := rawGet(t, srv.URL+"/static/"+ref, "gzip")
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || len(body) == 0 {
			t.Errorf("GET /static/%s: status %d, Cache-Control %q", ref, res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
}
