package providers_test

import (
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
