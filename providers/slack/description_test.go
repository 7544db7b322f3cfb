package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// undescribedMethod is a request Slack's API description (providertest's testdata, an old
// OpenAPI 2 file) does not know, checked instead against the parameters Slack
// documents on the method's page.
type undescribedMethod struct {
	name string // the Web API method, e.g. files.getUploadURLExternal
	// path is the request path; prefix makes it a prefix (an upload URL's path).
	path   string
	prefix bool
	docs   string
	// form declares the form parameters: required ones and a check of each value.
	// With rawBody set the method takes no form: its body is the raw file bytes.
	form     map[string]param
	rawBody  bool
	wantDesc string // why it is absent from the description
}

// param is one documented parameter.
type param struct {
	required bool
	valid    func(string) error
}

// undescribedMethods lists, explicitly, every request the Slack operations send that
// Slack's API description lacks. TestUndescribedMethodsAbsent fails once the
// description gains one, so the entry can go and the description check take over.
func undescribedMethods() []undescribedMethod {
	str := func(string) error { return nil }
	nonEmpty := func(v string) error {
		if v == "" {
			return fmt.Errorf("is empty")
		}
		return nil
	}
	positive := func(v string) error {
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive integer", v)
		}
		return nil
	}
	pattern := func(re string) func(string) error {
		rx := regexp.MustCompile(re)
		return func(v string) error {
			if !rx.MatchString(v) {
				return fmt.Errorf("%q does not match %s", v, re)
			}
			return nil
		}
	}
	files := func(v string) error {
		var fs []struct {
			ID    *string `json:"id"`
			Title *string `json:"title"`
		}
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&fs); err != nil {
			return fmt.Errorf("%q is not a JSON array of {id, title}: %v", v, err)
		}
		if len(fs) == 0 {
			return fmt.Errorf("is an empty array")
		}
		for _, f := range fs {
			if f.ID == nil || !regexp.MustCompile(`^F[A-Z0-9]{8,}$`).MatchString(*f.ID) {
				return fmt.Errorf("%q: every item needs the id of a file (F…)", v)
			}
		}
		return nil
	}
	return []undescribedMethod{
		{
			name: "files.getUploadURLExternal", path: "/files.getUploadURLExternal",
			docs:     "https://api.slack.com/methods/files.getUploadURLExternal",
			wantDesc: "added in 2023 with the external upload flow",
			form: map[string]param{
				"filename":     {required: true, valid: nonEmpty},
				"length":       {required: true, valid: positive},
				"alt_txt":      {valid: str},
				"snippet_type": {valid: str},
			},
		},
		{
			name: "files.completeUploadExternal", path: "/files.completeUploadExternal",
			docs:     "https://api.slack.com/methods/files.completeUploadExternal",
			wantDesc: "added in 2023 with the external upload flow",
			form: map[string]param{
				"files":           {required: true, valid: files},
				"channel_id":      {valid: pattern(`^[CDG][A-Z0-9]{8,}$`)},
				"channels":        {valid: str},
				"initial_comment": {valid: str},
				"thread_ts":       {valid: pattern(`^\d{10}\.\d{6}$`)},
				"blocks":          {valid: str},
			},
		},
		{
			// Not a Web API method: the upload_url files.getUploadURLExternal answers,
			// on files.slack.com (https://files.slack.com/upload/v1/…), takes the file
			// as the raw body of a POST (https://api.slack.com/messaging/files#upload).
			name: "upload_url", path: "/upload/v1/", prefix: true,
			docs:     "https://api.slack.com/messaging/files#uploading_files",
			wantDesc: "not a Web API method: the URL files.getUploadURLExternal hands out",
			rawBody:  true,
		},
	}
}

// undescribedFor returns the undescribed method a request path belongs to.
func undescribedFor(path string) (undescribedMethod, bool) {
	for _, m := range undescribedMethods() {
		if path == m.path || (m.prefix && strings.HasPrefix(path, m.path)) {
			return m, true
		}
	}
	return undescribedMethod{}, false
}

// check fails t unless r is what the method's documentation asks for: a POST with no
// query, and either the raw file bytes or a form with every required parameter, only
// documented ones, each value valid.
func (m undescribedMethod) check(t *testing.T, r providertest.Request) {
	t.Helper()
	where := fmt.Sprintf("%s (undescribed; %s): %s %s", m.name, m.docs, r.Method, r.Path)
	if r.Method != http.MethodPost {
		t.Errorf("%s: method %s, want POST", where, r.Method)
	}
	if len(r.Query) > 0 {
		t.Errorf("%s: query %q, want none", where, r.Query.Encode())
	}
	if m.rawBody {
		if r.ContentType != "application/octet-stream" || len(r.Body) == 0 {
			t.Errorf("%s: body is %d bytes of %q, want the file's bytes as application/octet-stream", where, len(r.Body), r.ContentType)
		}
		return
	}
	if r.ContentType != "application/x-www-form-urlencoded" {
		t.Errorf("%s: content type %q, want a form", where, r.ContentType)
		return
	}
	form, err := url.ParseQuery(string(r.Body))
	if err != nil {
		t.Errorf("%s: form %q: %v", where, r.Body, err)
		return
	}
	for _, k := range slices.Sorted(mapsKeys(m.form)) {
		if m.form[k].required && form.Get(k) == "" {
			t.Errorf("%s: required parameter %s is missing", where, k)
		}
	}
	for _, k := range slices.Sorted(mapsKeys(form)) {
		p, ok := m.form[k]
		switch {
		case !ok:
			t.Errorf("%s: parameter %q is not documented", where, k)
		case len(form[k]) != 1:
			t.Errorf("%s: parameter %s sent %d times", where, k, len(form[k]))
		default:
			if err := p.valid(form.Get(k)); err != nil {
				t.Errorf("%s: parameter %s: %v", where, k, err)
			}
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// errRecorder is a testing.TB that records errors instead of failing, to ask the
// description whether it knows a request.
type errRecorder struct {
	testing.TB
	errs []string
}

func (r *errRecorder) Helper() {}
func (r *errRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestUndescribedMethodsAbsent asserts that every method of undescribedMethods is
// still missing from Slack's description: once the description gains one, this fails,
// and the method must leave the list so that its requests are checked against the
// description.
func TestUndescribedMethodsAbsent(t *testing.T) {
	t.Parallel()
	desc := providertest.SlackDescription(t)
	for _, m := range undescribedMethods() {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			path := m.path
			if m.prefix {
				path += "CwABAAAAXAoAAZnBg"
			}
			rec := &errRecorder{TB: t}
			r := providertest.Request{Method: http.MethodPost, Path: path, Header: http.Header{"Authorization": {"Bearer " + testToken}},
				ContentType: "application/x-www-form-urlencoded", Body: []byte("filename=a.txt&length=1")}
			if id := desc.CheckRequest(rec, r); id != "" {
				t.Errorf("the Slack description now has %s as operation %s: drop it from undescribedMethods (it was %s)", m.name, id, m.wantDesc)
			}
			if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "matches no operation") {
				t.Errorf("description check of %s = %q, want one \"matches no operation\"", m.name, rec.errs)
			}
		})
	}
}
