package github

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
)

func TestRevokeGrant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{name: "deleted", status: 204},
		{name: "grant gone already", status: 404, body: `{"message":"Not Found"}`},
		{name: "bad app credentials", status: 401, body: `{"message":"Requires authentication"}`, wantErr: "Requires authentication"},
		{name: "validation failed", status: 422, body: `{"message":"Validation Failed"}`, wantErr: "Validation Failed"},
		{name: "outage", status: 502, body: `bad gateway`, wantErr: "502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, secret, _ := r.BasicAuth()
				body, _ := io.ReadAll(r.Body)
				got = r.Method + " " + r.URL.Path + " " + id + ":" + secret + " " + string(body)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			err := revoke(context.Background(), providers.RevokeRequest{HTTP: srv.Client(), BaseURL: srv.URL, ClientID: "Iv1.app", ClientSecret: "s3cret", AccessToken: "gho_tok"})
			if want := `DELETE /applications/Iv1.app/grant Iv1.app:s3cret {"access_token":"gho_tok"}`; got != want {
				t.Errorf("request = %q, want %q", got, want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one naming %q", err, tt.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), "gho_tok") || strings.Contains(err.Error(), "s3cret")) {
				t.Errorf("the error carries a secret: %v", err)
			}
		})
	}
}
