package providers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
)

type outputItem struct {
	Tags []string `json:"tags"`
}

type outputShape struct {
	Names    []string              `json:"names"`
	Optional []string              `json:"optional,omitempty"`
	Fields   map[string]string     `json:"fields"`
	Items    []outputItem          `json:"items"`
	ByKey    map[string]outputItem `json:"by_key"`
	Ptr      *outputItem           `json:"ptr"`
	Bytes    []byte                `json:"bytes"`
	Skipped  []string              `json:"-"`
	hidden   []string
}

func TestMarshalOutputWritesNilCollectionsAsEmpty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "the zero value", in: outputShape{},
			want: `{"names":[],"fields":{},"items":[],"by_key":{},"ptr":null,"bytes":null}`},
		{name: "nested nil slices", in: &outputShape{Items: []outputItem{{}}, ByKey: map[string]outputItem{"a": {}}, Ptr: &outputItem{}, Optional: []string{"x"}},
			want: `{"names":[],"optional":["x"],"fields":{},"items":[{"tags":[]}],"by_key":{"a":{"tags":[]}},"ptr":{"tags":[]},"bytes":null}`},
		{name: "values kept", in: outputShape{Names: []string{"n"}, Fields: map[string]string{"k": "v"}, hidden: []string{"h"}},
			want: `{"names":["n"],"fields":{"k":"v"},"items":[],"by_key":{},"ptr":null,"bytes":null}`},
		{name: "nil", in: nil, want: `null`},
		{name: "a slice at the top", in: []outputItem{{}}, want: `[{"tags":[]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := providers.MarshalOutput(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("MarshalOutput (-want +got):\n%s", diff)
			}
		})
	}
	// The caller's value is not changed.
	in := &outputShape{Items: []outputItem{{}}}
	if _, err := providers.MarshalOutput(in); err != nil {
		t.Fatal(err)
	}
	if in.Names != nil || in.Items[0].Tags != nil {
		t.Errorf("MarshalOutput changed its argument: %+v", in)
	}
}

// TestMarshalOutputCopiesNothingWhenNothingIsNil: an output with every collection set
// (the usual upstream answer) is encoded as it is, with no copy made to fill it, so it
// costs what json.Marshal costs; one with a nil collection is still filled.
func TestMarshalOutputCopiesNothingWhenNothingIsNil(t *testing.T) {
	full := &outputShape{Names: []string{"a"}, Fields: map[string]string{"k": "v"}, Items: []outputItem{{Tags: []string{"x"}}},
		ByKey: map[string]outputItem{"k": {Tags: []string{}}}, Ptr: &outputItem{Tags: []string{}}, Bytes: []byte("b")}
	want, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	got, err := providers.MarshalOutput(full)
	if err != nil || string(got) != string(want) {
		t.Fatalf("MarshalOutput = %s, %v; want %s", got, err, want)
	}
	// Under the race detector MarshalOutput's reflection makes two allocations more
	// (9 against json.Marshal's 7, in every run on Go 1.26), so the count is compared
	// only in the plain run; CI runs both.
	if !raceEnabled {
		// AllocsPerRun counts the whole process's allocations, so a goroutine an earlier
		// test left running can add to either figure: the least of a few rounds is the
		// function's own.
		fewest := func(f func()) float64 {
			least := testing.AllocsPerRun(50, f)
			for range 4 {
				least = min(least, testing.AllocsPerRun(50, f))
			}
			return least
		}
		plain := fewest(func() { _, _ = json.Marshal(full) })
		output := fewest(func() { _, _ = providers.MarshalOutput(full) })
		// Reading the one struct value of ByKey through reflection allocates once.
		if output > plain+1 {
			t.Errorf("MarshalOutput made %.0f allocations where json.Marshal makes %.0f: it copied an output with nothing to fill", output, plain)
		}
	}
	full.Items[0].Tags = nil
	got, _ = providers.MarshalOutput(full)
	if !strings.Contains(string(got), `"items":[{"tags":[]}]`) {
		t.Errorf("a nil slice in an item: %s, want it written as []", got)
	}
}
