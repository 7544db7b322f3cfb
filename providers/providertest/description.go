package providertest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// APIDescription is an upstream's official API description (OpenAPI), loaded once per
// test process, with a router that matches requests on method and path only: the
// description's servers (https://api.github.com, https://slack.com/api) are cleared, and
// a request path that starts with a server's base path (Slack's /api) matches with or
// without it. It is read-only after loading and safe for concurrent use.
type APIDescription struct {
	name   string // "GitHub", "Slack"
	file   string
	doc    *openapi3.T
	router routers.Router
	byID   map[string]*routers.Route
	// basePaths are the path parts of the description's servers, e.g. "/api".
	basePaths []string
	// bearerToken holds the operations whose `token` parameter is satisfied by an
	// Authorization: Bearer header (Slack).
	bearerToken map[string]bool
	// multiSegment match the paths with a parameter that may hold slashes (GitHub's
	// x-multi-segment: contents/{path}, branches/{branch}), which the router cannot.
	multiSegment []multiSegmentRoute
	load         time.Duration // how long reading, parsing and routing took
}

// multiSegmentRoute matches a path template whose x-multi-segment parameters may span
// several segments.
type multiSegmentRoute struct {
	re    *regexp.Regexp
	names []string
	path  string
	item  *openapi3.PathItem
	spec  *openapi3.T
}

// The descriptions, loaded on first use and immutable afterwards.
var (
	loadGitHub = sync.OnceValues(func() (*APIDescription, error) {
		return loadDescription("GitHub", "github/api.github.com.json.gz", parseGitHub)
	})
	loadSlack = sync.OnceValues(func() (*APIDescription, error) {
		return loadDescription("Slack", "slack/slack_web_openapi_v2.json.gz", parseSlack)
	})
)

// GitHubDescription returns GitHub's REST API description (OpenAPI 3.0, from
// @octokit/openapi), loaded once per test process (about 2.5 s). The document is
// loaded, not validated: the official file fails kin-openapi's document validation (an
// example of the wrong type in the actions-hosted-runner schema), and the loader drops
// descriptions and examples, which request and response validation never read, to
// halve the load time.
func GitHubDescription(t testing.TB) *APIDescription {
	t.Helper()
	d, err := loadGitHub()
	if err != nil {
		t.Fatalf("providertest: %v", err)
	}
	return d
}

// SlackDescription returns Slack's Web API description (OpenAPI 2, converted to
// OpenAPI 3), loaded once per test process.
//
// Slack's description asks for a `token` parameter (in a header, the query or the form)
// on most methods; we send the token as Authorization: Bearer instead, as Slack
// recommends. So the loader makes every `token` parameter and form field optional, and
// CheckRequest then requires, for those methods, an Authorization: Bearer header (or a
// token parameter). Slack also accepts JSON bodies for POST methods
// (https://api.slack.com/web#posting_json), so every form body is also accepted as
// application/json against the same schema.
func SlackDescription(t testing.TB) *APIDescription {
	t.Helper()
	d, err := loadSlack()
	if err != nil {
		t.Fatalf("providertest: %v", err)
	}
	return d
}

func loadDescription(name, rel string, parse func([]byte) (*openapi3.T, error)) (*APIDescription, error) {
	start := time.Now()
	path := "testdata/specs/" + rel
	raw, err := readSpec(rel)
	if err != nil {
		return nil, fmt.Errorf("load %s API description: %w", name, err)
	}
	doc, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("load %s API description %s: %w", name, path, err)
	}
	d := &APIDescription{name: name, file: path, doc: doc, byID: map[string]*routers.Route{}, bearerToken: map[string]bool{}}
	d.basePaths = basePaths(doc.Servers)
	if name == "Slack" {
		d.relaxToken()
		acceptJSONBodies(doc)
	}
	clearServers(doc)
	for _, p := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(p)
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				continue
			}
			d.byID[op.OperationID] = &routers.Route{Spec: doc, Path: p, PathItem: item, Method: method, Operation: op}
		}
	}
	d.multiSegment = multiSegmentRoutes(doc)
	if d.router, err = gorillamux.NewRouter(doc); err != nil {
		return nil, fmt.Errorf("load %s API description %s: route: %w", name, path, err)
	}
	d.load = time.Since(start)
	return d, nil
}

func parseGitHub(raw []byte) (*openapi3.T, error) {
	return loadV3(raw)
}

func loadV3(data []byte) (*openapi3.T, error) {
	data, err := prune(data)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = false
	doc, err := l.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	return doc, nil
}

func parseSlack(raw []byte) (*openapi3.T, error) {
	raw, err := fixSlackV2(raw)
	if err != nil {
		return nil, err
	}
	var v2 openapi2.T
	if err := json.Unmarshal(raw, &v2); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return nil, fmt.Errorf("convert to OpenAPI 3: %w", err)
	}
	// Resolve the converted document's references the way a loaded one is.
	data, err := json.Marshal(v3)
	if err == nil {
		data, err = fixSlackV3(data)
	}
	if err != nil {
		return nil, fmt.Errorf("convert to OpenAPI 3: %w", err)
	}
	return loadV3(data)
}

// basePaths returns the path parts of the servers, without a trailing slash, longest first.
func basePaths(servers openapi3.Servers) []string {
	var out []string
	for _, s := range servers {
		u, err := url.Parse(s.URL)
		if err != nil {
			continue
		}
		if p := strings.TrimRight(u.Path, "/"); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// clearServers removes every server so routes match on path and method alone.
func clearServers(doc *openapi3.T) {
	doc.Servers = nil
	for _, item := range doc.Paths.Map() {
		item.Servers = nil
		for _, op := range item.Operations() {
			op.Servers = nil
		}
	}
}

// relaxToken makes every `token` parameter and form field optional and remembers the
// operations that required one.
func (d *APIDescription) relaxToken() {
	for _, item := range d.doc.Paths.Map() {
		for _, op := range item.Operations() {
			needs := false
			for _, ps := range [][]*openapi3.ParameterRef{item.Parameters, op.Parameters} {
				for _, p := range ps {
					if p.Value != nil && p.Value.Name == "token" && p.Value.Required {
						p.Value.Required = false
						needs = true
					}
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					if mt.Schema == nil || mt.Schema.Value == nil {
						continue
					}
					s := mt.Schema.Value
					if i := slices.Index(s.Required, "token"); i >= 0 {
						s.Required = slices.Delete(slices.Clone(s.Required), i, i+1)
						needs = true
					}
				}
			}
			if needs {
				d.bearerToken[op.OperationID] = true
			}
		}
	}
}

// acceptJSONBodies lets every form body also come as application/json.
func acceptJSONBodies(doc *openapi3.T) {
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			c := op.RequestBody.Value.Content
			if form := c.Get("application/x-www-form-urlencoded"); form != nil && c["application/json"] == nil {
				c["application/json"] = &openapi3.MediaType{Schema: form.Schema}
			}
		}
	}
}

var templateParam = regexp.MustCompile(`\{([^{}/]+)\}`)

// multiSegmentRoutes builds a multiSegmentRoute for every path template with a path
// parameter marked x-multi-segment (a parameter that may hold slashes).
func multiSegmentRoutes(doc *openapi3.T) []multiSegmentRoute {
	var out []multiSegmentRoute
	for _, p := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(p)
		multi := map[string]bool{}
		for _, ps := range append([]openapi3.Parameters{item.Parameters}, operationParams(item)...) {
			for _, ref := range ps {
				if v := ref.Value; v != nil && v.In == openapi3.ParameterInPath && v.Extensions["x-multi-segment"] == true {
					multi[v.Name] = true
				}
			}
		}
		if len(multi) == 0 {
			continue
		}
		var names []string
		var b strings.Builder
		b.WriteString("^")
		last := 0
		for _, loc := range templateParam.FindAllStringSubmatchIndex(p, -1) {
			b.WriteString(regexp.QuoteMeta(p[last:loc[0]]))
			name := p[loc[2]:loc[3]]
			names = append(names, name)
			if multi[name] {
				b.WriteString("(.+?)")
			} else {
				b.WriteString("([^/]+)")
			}
			last = loc[1]
		}
		b.WriteString(regexp.QuoteMeta(p[last:]) + "$")
		out = append(out, multiSegmentRoute{re: regexp.MustCompile(b.String()), names: names, path: p, item: item, spec: doc})
	}
	return out
}

func operationParams(item *openapi3.PathItem) []openapi3.Parameters {
	var out []openapi3.Parameters
	for _, op := range item.Operations() {
		out = append(out, op.Parameters)
	}
	return out
}

// match returns the route and path parameters of a method and decoded path.
func (mr multiSegmentRoute) match(method, path string) (*routers.Route, map[string]string, bool) {
	m := mr.re.FindStringSubmatch(path)
	if m == nil {
		return nil, nil, false
	}
	op := mr.item.GetOperation(method)
	if op == nil {
		return nil, nil, false
	}
	params := make(map[string]string, len(mr.names))
	for i, n := range mr.names {
		params[n] = m[i+1]
	}
	return &routers.Route{Spec: mr.spec, Path: mr.path, PathItem: mr.item, Method: method, Operation: op}, params, true
}
