package slack

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// maxUploadBytes bounds the file upload_file sends: the content travels inside the
// tool call's JSON arguments (base64 adds a third), so it is kept well below Slack's
// own 1 GB limit.
const maxUploadBytes = 4 << 20

// UploadFile uploads a file through Slack's external upload flow, the one Slack
// supports since files.upload was retired: files.getUploadURLExternal reserves a file
// and an upload URL, the bytes are POSTed to that URL, and files.completeUploadExternal
// finishes the upload and shares the file.
// Slack API docs: https://api.slack.com/messaging/files#uploading_files
var UploadFile = &providers.Operation[UploadFileInput, UploadedFile]{
	Name:  "upload_file",
	Title: "Upload file",
	Description: "Upload a file (a report, a log, a CSV, an image) to Slack and share it in a channel or thread, with an " +
		"optional comment. Give the content as text (content) or, for binary files, as base64 (content_base64): " +
		"exactly one of them, at most 4 MiB once decoded. Without channel the file is uploaded but private to this " +
		"connection. To share text that fits in a message, post_message is simpler. Each call uploads another file: " +
		"do not retry a call that succeeded. Returns the file ID (F…), its title and, when Slack gives it, its permalink.",
	DocsURL: "https://api.slack.com/methods/files.completeUploadExternal",
	Scopes:  []string{"files:write"},
	Hints:   providers.Hints{},
	Run:     uploadFile,
}

// UploadFileInput is the input of upload_file.
type UploadFileInput struct {
	Filename       string  `json:"filename" jsonschema:"The file's name with its extension, which sets its type in Slack, e.g. report.csv" schema:"minLength=1,maxLength=255,example=report.csv"`
	Content        *string `json:"content,omitempty" jsonschema:"The file's content as text (UTF-8); give this or content_base64, not both" schema:"maxLength=4194304,example=Hello from Switchboard"`
	ContentBase64  *string `json:"content_base64,omitempty" jsonschema:"The file's content as standard base64, for binary files; give this or content, not both" schema:"maxLength=5592408,example=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="`
	Title          *string `json:"title,omitempty" jsonschema:"Title shown in Slack; defaults to the filename" schema:"maxLength=255,example=Weekly sign-ups"`
	Channel        *string `json:"channel,omitempty" jsonschema:"Conversation ID of the channel to share the file in, e.g. C0123ABCD; omit it to keep the file private" schema:"example=C0123ABCD,pattern=^[CDG][A-Z0-9]+$"`
	InitialComment *string `json:"initial_comment,omitempty" jsonschema:"Message text (Slack mrkdwn) posted with the file; needs channel" schema:"maxLength=40000,example=Here are this week's numbers"`
	ThreadTS       *string `json:"thread_ts,omitempty" jsonschema:"Timestamp of a parent message (e.g. 1712345678.123456), to share the file as a reply in its thread; needs channel" schema:"example=1712345678.123456,pattern=^[0-9]+\\.[0-9]+$"`
}

// UploadedFile is a file Slack stored.
type UploadedFile struct {
	ID        string `json:"id" jsonschema:"The file's ID, e.g. F0123ABCD"`
	Title     string `json:"title" jsonschema:"The file's title"`
	Channel   string `json:"channel,omitempty" jsonschema:"The conversation the file was shared in, when one was given"`
	Permalink string `json:"permalink,omitempty" jsonschema:"Link to the file in Slack, when Slack reports it"`
	Size      int    `json:"size" jsonschema:"The number of bytes uploaded"`
}

type uploadURLResponse struct {
	envelope
	UploadURL string `json:"upload_url"`
	FileID    string `json:"file_id"`
}

type completeUploadResponse struct {
	envelope
	Files []struct {
		ID        string `json:"id"`
		Title     string `json:"title"`
		Permalink string `json:"permalink"`
	} `json:"files"`
}

// completeFile is one item of files.completeUploadExternal's files argument.
type completeFile struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

func uploadFile(ctx context.Context, c *providers.Call, in UploadFileInput) (UploadedFile, error) {
	data, err := uploadContent(in)
	if err != nil {
		return UploadedFile{}, err
	}
	if in.Channel == nil || *in.Channel == "" {
		if in.InitialComment != nil && *in.InitialComment != "" {
			return UploadedFile{}, switchboard.Invalid("initial_comment", "needs channel: the comment is posted with the file in that channel")
		}
		if in.ThreadTS != nil && *in.ThreadTS != "" {
			return UploadedFile{}, switchboard.Invalid("thread_ts", "needs channel: the thread is in that channel")
		}
	}

	var reserved uploadURLResponse
	form := url.Values{"filename": {in.Filename}, "length": {strconv.Itoa(len(data))}}
	if _, err := send(ctx, c, http.MethodPost, "files.getUploadURLExternal", form, &reserved); err != nil {
		return UploadedFile{}, err
	}
	if err := postBytes(ctx, c, reserved.UploadURL, data); err != nil {
		return UploadedFile{}, err
	}

	title := in.Filename
	if in.Title != nil && *in.Title != "" {
		title = *in.Title
	}
	files, err := json.Marshal([]completeFile{{ID: reserved.FileID, Title: title}})
	if err != nil {
		return UploadedFile{}, fmt.Errorf("slack files.completeUploadExternal: encode files: %w", err)
	}
	form = url.Values{"files": {string(files)}}
	setOpt(form, "channel_id", in.Channel)
	setOpt(form, "initial_comment", in.InitialComment)
	setOpt(form, "thread_ts", in.ThreadTS)
	var done completeUploadResponse
	if _, err := send(ctx, c, http.MethodPost, "files.completeUploadExternal", form, &done); err != nil {
		return UploadedFile{}, err
	}
	out := UploadedFile{ID: reserved.FileID, Title: title, Size: len(data)}
	if in.Channel != nil {
		out.Channel = *in.Channel
	}
	for _, f := range done.Files {
		if f.ID == reserved.FileID {
			out.Title, out.Permalink = f.Title, f.Permalink
		}
	}
	return out, nil
}

// uploadContent returns the bytes to upload: exactly one of content and content_base64,
// at least one byte and at most maxUploadBytes.
func uploadContent(in UploadFileInput) ([]byte, error) {
	var (
		data  []byte
		field string
	)
	switch {
	case in.Content != nil && in.ContentBase64 != nil:
		return nil, switchboard.Invalid("content", "give either content (text) or content_base64 (binary), not both")
	case in.Content != nil:
		data, field = []byte(*in.Content), "content"
	case in.ContentBase64 != nil:
		field = "content_base64"
		if n := base64.StdEncoding.DecodedLen(len(*in.ContentBase64)); n > maxUploadBytes+2 {
			return nil, tooBig(field, n)
		}
		var err error
		if data, err = base64.StdEncoding.DecodeString(strings.TrimSpace(*in.ContentBase64)); err != nil {
			return nil, switchboard.Invalid(field, "is not standard base64 (A-Z, a-z, 0-9, + and /, padded with =)")
		}
	default:
		return nil, switchboard.Invalid("content", "is missing: give the file's content as content (text) or content_base64 (binary)")
	}
	switch {
	case len(data) == 0:
		return nil, switchboard.Invalid(field, "is empty; a file needs at least one byte")
	case len(data) > maxUploadBytes:
		return nil, tooBig(field, len(data))
	}
	return data, nil
}

func tooBig(field string, n int) error {
	return switchboard.Invalid(field, fmt.Sprintf("holds %d bytes; upload_file takes at most %d bytes (4 MiB)", n, maxUploadBytes))
}

// postBytes sends the file to the upload URL files.getUploadURLExternal returned, as
// the raw body of a POST, through the Call's client. The URL must be https on Slack's
// own domain, or on the host of the Call's base URL (a test or a proxy): the client
// sends the connection's token with every request.
func postBytes(ctx context.Context, c *providers.Call, uploadURL string, data []byte) error {
	if err := checkUploadURL(c, uploadURL); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uploadURL, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("slack file upload: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		var ue *providers.UpstreamError
		if errors.As(err, &ue) || ctx.Err() != nil {
			return fmt.Errorf("slack file upload: %w", err)
		}
		return &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Slack's file server could not be reached; try again shortly", Err: fmt.Errorf("slack file upload: %w", err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return providers.StatusError("slack", resp, "upload_failed", "Slack's file server refused the file (HTTP "+strconv.Itoa(resp.StatusCode)+"); try again")
	}
	return nil
}

// checkUploadURL refuses an upload URL the token must not be sent to.
func checkUploadURL(c *providers.Call, raw string) error {
	bad := &providers.UpstreamError{Provider: "slack", Status: http.StatusOK, Code: switchboard.CodeUpstream, Reason: "invalid_response",
		Message: "Slack's files.getUploadURLExternal answered an upload URL off Slack's domain; the file was not sent"}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return bad
	}
	host := strings.ToLower(u.Hostname())
	if u.Scheme == "https" && (host == "slack.com" || strings.HasSuffix(host, ".slack.com")) {
		return nil
	}
	if base, err := url.Parse(c.BaseURL); err == nil && base.Scheme == u.Scheme && strings.EqualFold(base.Host, u.Host) {
		return nil
	}
	return bad
}
