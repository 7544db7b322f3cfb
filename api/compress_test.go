package api_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestCatalogAnswersCompressedAndRevalidated: a GET of a provider's operations (the
// largest answer the pages load) comes gzip-compressed to a client that accepts it,
// with an ETag, and a repeat with If-None-Match is a 304 without a body.
func TestCatalogAnswersCompressedAndRevalidated(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		get := func(headers map[string]string) *http.Response {
			req, err := http.NewRequest(http.MethodGet, w.srv.URL+"/api/providers/github/operations", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+w.member.key)
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			res, err := w.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { res.Body.Close() })
			return res
		}
		res := get(map[string]string{"Accept-Encoding": "gzip"})
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("ETag") == "" {
			t.Fatalf("status %d, encoding %q, ETag %q", res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("ETag"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		var ops struct {
			Operations []struct{ Tool string } `json:"operations"`
		}
		if err := json.Unmarshal(plain, &ops); err != nil || len(ops.Operations) < 10 {
			t.Fatalf("the gzip body decodes to %d operations (%v)", len(ops.Operations), err)
		}
		t.Logf("github operations: %d bytes of JSON, %d gzipped", len(plain), len(raw))
		if len(raw)*3 > len(plain) {
			t.Errorf("gzip made %d bytes of %d", len(raw), len(plain))
		}
		again := get(map[string]string{"Accept-Encoding": "gzip", "If-None-Match": res.Header.Get("ETag")})
		if body, _ := io.ReadAll(again.Body); again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("a revalidation answered %d with %d bytes, want 304 and none", again.StatusCode, len(body))
		}
		plainRes := get(map[string]string{"Accept-Encoding": "identity"})
		if b, _ := io.ReadAll(plainRes.Body); plainRes.Header.Get("Content-Encoding") != "" || string(b) != string(plain) {
			t.Errorf("without gzip: encoding %q, body differs %v", plainRes.Header.Get("Content-Encoding"), string(b) != string(plain))
		}
	})
}
