package providers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
)

type echoIn struct {
	Text  string `json:"text" jsonschema:"Text to echo"`
	Times *int   `json:"times,omitempty" jsonschema:"Repetitions" schema:"minimum=1,default=1"`
}

type echoOut struct {
	Text      string `json:"text" jsonschema:"The echoed text"`
	Retryable bool   `json:"retryable" jsonschema:"Whether the call ran with retries allowed"`
}

func echoOp(name string, hints Hints) *Operation[echoIn, echoOut] {
	return &Operation[echoIn, echoOut]{
		Name: name, Title: "Echo", Description: "Echo the text.", Hints: hints,
		Run: func(ctx context.Context, c *Call, in echoIn) (echoOut, error) {
			return echoOut{Text: strings.Repeat(in.Text, *cmpOr(in.Times, 1)), Retryable: retryable(ctx)}, nil
		},
	}
}

func cmpOr(p *int, def int) *int {
	if p == nil {
		return &def
	}
	return p
}

func fakeSpec(name string, ops ...Op) Spec {
	return Spec{Name: name, Title: "Fake", Verify: func(context.Context, *Call) (Account, error) { return Account{}, nil }, Operations: ops}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	if err := r.Register(fakeSpec("fake", echoOp("echo", Hints{ReadOnly: true}), echoOp("shout", Hints{}))); err != nil {
		t.Fatal(err)
	}
	tool, ok := r.Tool("fake_echo")
	if !ok {
		t.Fatal("tool fake_echo not registered")
	}
	if got := []string{r.Tools("fake")[0].Name, r.Tools("fake")[1].Name}; !cmp.Equal(got, []string{"fake_echo", "fake_shout"}) {
		t.Errorf("tools in order = %v", got)
	}
	var in map[string]any
	if err := json.Unmarshal(tool.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"text"}, in["required"]); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	if err := tool.Validate(json.RawMessage(`{"times":0,"text":"a"}`)); switchboard.CodeOf(err) != switchboard.CodeInvalid {
		t.Errorf("Validate(times=0) = %v, want invalid", err)
	}
	out, err := tool.Op.Invoke(context.Background(), &Call{}, json.RawMessage(`{"text":"ab","times":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(echoOut{Text: "abab", Retryable: true}, out); diff != "" {
		t.Errorf("Invoke (-want +got):\n%s", diff)
	}
	shout, _ := r.Tool("fake_shout")
	out, _ = shout.Op.Invoke(context.Background(), &Call{}, json.RawMessage(`{"text":"x"}`))
	if out.(echoOut).Retryable {
		t.Error("an operation without ReadOnly or Idempotent hints ran with retries allowed")
	}
	if r.BaseURL("fake") != "" {
		t.Errorf("BaseURL = %q before override", r.BaseURL("fake"))
	}
	if err := r.SetBaseURL("fake", "http://127.0.0.1:1"); err != nil || r.BaseURL("fake") != "http://127.0.0.1:1" {
		t.Errorf("SetBaseURL: %v, %q", err, r.BaseURL("fake"))
	}
	if err := r.SetRateLimit("fake", RateLimit{PerSecond: 99, Burst: 7}); err != nil {
		t.Fatal(err)
	}
	if spec, _ := r.Provider("fake"); spec.RateLimit.PerSecond != 99 || spec.RateLimit.Burst != 7 {
		t.Errorf("rate limit after SetRateLimit = %+v", spec.RateLimit)
	}
	if err := r.SetRateLimit("nope", RateLimit{}); err == nil {
		t.Error("SetRateLimit accepted an unknown provider")
	}
	if err := r.SetBaseURL("nope", "x"); err == nil {
		t.Error("SetBaseURL accepted an unknown provider")
	}
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec Spec
	}{
		{name: "upper-case provider", spec: fakeSpec("Fake")},
		{name: "no verify", spec: Spec{Name: "fake"}},
		{name: "bad operation name", spec: fakeSpec("fake", echoOp("Echo-It", Hints{}))},
		{name: "duplicate operation", spec: fakeSpec("fake", echoOp("echo", Hints{}), echoOp("echo", Hints{}))},
		{name: "tool name over 64 characters", spec: fakeSpec("fake", echoOp(strings.Repeat("a", 60), Hints{}))},
		{name: "no description", spec: fakeSpec("fake", &Operation[echoIn, echoOut]{Name: "x", Title: "X"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := NewRegistry().Register(tt.spec); err == nil {
				t.Error("Register succeeded, want an error")
			}
		})
	}
	r := NewRegistry()
	_ = r.Register(fakeSpec("fake"))
	if err := r.Register(fakeSpec("fake")); err == nil {
		t.Error("registering a provider twice succeeded")
	}
}
