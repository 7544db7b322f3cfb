package slack

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestUploadBinaryFile uploads bytes given as base64 without sharing them: the upload
// URL receives exactly the decoded bytes, the title defaults to the filename, and
// files.completeUploadExternal gets no channel.
func TestUploadBinaryFile(t *testing.T) {
	t.Parallel()
	raw := []byte{0x89, 'P', 'N', 'G', 0x00, 0xff, 0x10, '\n'}
	f := newFake(t,
		answer{body: uploadURLOK},
		answer{header: map[string]string{"Content-Type": "text/plain"}, body: "OK - 8"},
		answer{body: `{"ok":true,"files":[{"id":"F07ABCDEFGH","title":"pixel.png"}]}`},
	)
	got, err := invoke(t, f.call, "slack_upload_file", `{"filename":"pixel.png","content_base64":"`+base64.StdEncoding.EncodeToString(raw)+`"}`)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if diff := cmp.Diff(UploadedFile{ID: "F07ABCDEFGH", Title: "pixel.png", Size: len(raw)}, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	reqs := f.up.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	wantRequest{method: http.MethodPost, path: "/files.getUploadURLExternal", form: map[string]string{"filename": "pixel.png", "length": "8"}}.check(t, reqs[0])
	wantRequest{method: http.MethodPost, path: "/upload/v1/CwABAAAAXAoAAZnBgQ", contentType: "application/octet-stream", body: string(raw)}.check(t, reqs[1])
	wantRequest{method: http.MethodPost, path: "/files.completeUploadExternal",
		form: map[string]string{"files": `[{"id":"F07ABCDEFGH","title":"pixel.png"}]`}}.check(t, reqs[2])
	if diff := cmp.Diff([]string{"files.getUploadURLExternal", "upload_url", "files.completeUploadExternal"}, f.checkRequests(t)); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	checkOutput(t, tool(t, "slack_upload_file"), got)
}

// TestUploadFailures checks each step's failure: the upload stops there, and what was
// not reached is not sent.
func TestUploadFailures(t *testing.T) {
	t.Parallel()
	const args = `{"filename":"report.csv","content":"a,b\n1,2\n","channel":"C012AB3CD"}`
	textPlain := map[string]string{"Content-Type": "text/plain"}
	tests := []struct {
		name         string
		answers      []answer
		wantCode     switchboard.Code
		wantReason   string
		wantMessage  string
		wantRequests int
	}{
		{name: "upload URL off Slack's domain", answers: []answer{{body: `{"ok":true,"upload_url":"https://files.slack.com.evil.example/upload/v1/x","file_id":"F07ABCDEFGH"}`}},
			wantCode: switchboard.CodeUpstream, wantReason: "invalid_response", wantMessage: "off Slack's domain", wantRequests: 1},
		{name: "upload URL is not absolute", answers: []answer{{body: `{"ok":true,"upload_url":"/upload/v1/x","file_id":"F07ABCDEFGH"}`}},
			wantCode: switchboard.CodeUpstream, wantReason: "invalid_response", wantRequests: 1},
		{name: "file server fails", answers: []answer{{body: uploadURLOK}, {status: 500, header: textPlain, body: "Internal Server Error"}},
			wantCode: switchboard.CodeUpstream, wantReason: "upload_failed", wantMessage: "HTTP 500", wantRequests: 2},
		{name: "file server refuses", answers: []answer{{body: uploadURLOK}, {status: 403, header: textPlain, body: "Forbidden"}},
			wantCode: switchboard.CodeForbidden, wantReason: "upload_failed", wantRequests: 2},
		{name: "file server rate limits", answers: []answer{{body: uploadURLOK}, {status: 429, header: map[string]string{"Content-Type": "text/plain", "Retry-After": "20"}, body: "slow down"}},
			wantCode: switchboard.CodeRateLimited, wantReason: "upload_failed", wantRequests: 2},
		{name: "completing in a missing channel", answers: []answer{{body: uploadURLOK}, {header: textPlain, body: "OK - 8"}, {body: `{"ok":false,"error":"channel_not_found"}`}},
			wantCode: switchboard.CodeNotFound, wantReason: "channel_not_found", wantRequests: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.answers...)
			out, err := invoke(t, f.call, "slack_upload_file", args)
			if err == nil {
				t.Fatalf("no error, output %+v", out)
			}
			ue := upstreamError(t, err)
			if codeOf(err) != tt.wantCode || ue.Reason != tt.wantReason || !strings.Contains(ue.Message, tt.wantMessage) {
				t.Errorf("error = %v (code %s, reason %q), want code %s, reason %q, message with %q", err, codeOf(err), ue.Reason, tt.wantCode, tt.wantReason, tt.wantMessage)
			}
			if n := len(f.up.Requests()); n != tt.wantRequests {
				t.Errorf("%d requests, want %d (an upload is sent once, and stops at the failed step)", n, tt.wantRequests)
			}
			f.checkRequests(t)
		})
	}
}

// TestCheckUploadURL checks where the file and the token may go: https on Slack's
// domain, or the host of the deployment's Slack base URL.
func TestCheckUploadURL(t *testing.T) {
	t.Parallel()
	call := &providers.Call{BaseURL: "http://127.0.0.1:8089/api"}
	tests := []struct {
		url string
		ok  bool
	}{
		{url: "https://files.slack.com/upload/v1/CwABAAAAXAoAAZnBgQ", ok: true},
		{url: "https://slack.com/upload/v1/x", ok: true},
		{url: "https://FILES.Slack.com/upload/v1/x", ok: true},
		{url: "http://127.0.0.1:8089/upload/v1/x", ok: true},
		{url: "http://files.slack.com/upload/v1/x"},
		{url: "https://files.slack.com.evil.example/upload"},
		{url: "https://evilslack.com/upload"},
		{url: "http://127.0.0.1:9999/upload/v1/x"},
		{url: "https://127.0.0.1:8089/upload/v1/x"},
		{url: "/upload/v1/x"},
		{url: ""},
		{url: "://bad"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			if err := checkUploadURL(call, tt.url); (err == nil) != tt.ok {
				t.Errorf("checkUploadURL(%q) = %v, want ok %v", tt.url, err, tt.ok)
			}
		})
	}
}
