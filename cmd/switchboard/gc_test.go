package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGCDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		cgroupMax string
		want      [2]int64 // percent, limit
	}{
		{"nothing set, no cgroup limit", nil, "max\n", [2]int64{200, 0}},
		{"nothing set, memory.max unreadable", nil, "", [2]int64{200, 0}},
		{"nothing set, a 1 GiB cgroup", nil, "1073741824\n", [2]int64{200, 858993459}},
		{"GOGC set by the operator", map[string]string{"GOGC": "50"}, "1073741824\n", [2]int64{0, 858993459}},
		{"GOGC=off by the operator", map[string]string{"GOGC": "off"}, "max", [2]int64{0, 0}},
		{"GOMEMLIMIT set by the operator", map[string]string{"GOMEMLIMIT": "512MiB"}, "1073741824", [2]int64{200, 0}},
		{"a cgroup value that is not a number", nil, "lots", [2]int64{200, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			percent, limit := gcDefaults(func(k string) string { return tt.env[k] }, tt.cgroupMax)
			if diff := cmp.Diff(tt.want, [2]int64{int64(percent), limit}); diff != "" {
				t.Errorf("gcDefaults (-want +got):\n%s", diff)
			}
		})
	}
}
