package main

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadOverloadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    overloadConfig
		wantBad string // the variable an error names
	}{
		{name: "defaults", want: overloadConfig{}},
		{name: "set", env: map[string]string{"SWITCHBOARD_MAX_INFLIGHT": "64", "SWITCHBOARD_MAX_ADMITTED": "4096", "SWITCHBOARD_UPSTREAM_MAX_ADMITTED": "2048", "SWITCHBOARD_TENANT_MAX_ADMITTED": "64", "SWITCHBOARD_ADMISSION_WAIT": "500ms", "SWITCHBOARD_UPSTREAM_SLOW": "3s",
			"SWITCHBOARD_UPSTREAM_READ_TIMEOUT": "5s", "SWITCHBOARD_UPSTREAM_WRITE_TIMEOUT": "20s", "SWITCHBOARD_DRAIN_TIMEOUT": "1m"},
			want: overloadConfig{MaxInFlight: 64, MaxAdmitted: 4096, UpstreamAdmitted: 2048, TenantAdmitted: 64, AdmissionWait: 500 * time.Millisecond, UpstreamSlow: 3 * time.Second, UpstreamReadTimeout: 5 * time.Second, UpstreamWriteTimeout: 20 * time.Second, DrainTimeout: time.Minute}},
		{name: "in-flight not a number", env: map[string]string{"SWITCHBOARD_MAX_INFLIGHT": "lots"}, wantBad: "SWITCHBOARD_MAX_INFLIGHT"},
		{name: "in-flight zero", env: map[string]string{"SWITCHBOARD_MAX_INFLIGHT": "0"}, wantBad: "SWITCHBOARD_MAX_INFLIGHT"},
		{name: "admitted not a number", env: map[string]string{"SWITCHBOARD_MAX_ADMITTED": "many"}, wantBad: "SWITCHBOARD_MAX_ADMITTED"},
		{name: "admitted zero", env: map[string]string{"SWITCHBOARD_MAX_ADMITTED": "0"}, wantBad: "SWITCHBOARD_MAX_ADMITTED"},
		{name: "upstream bound not a number", env: map[string]string{"SWITCHBOARD_UPSTREAM_MAX_ADMITTED": "plenty"}, wantBad: "SWITCHBOARD_UPSTREAM_MAX_ADMITTED"},
		{name: "upstream bound zero", env: map[string]string{"SWITCHBOARD_UPSTREAM_MAX_ADMITTED": "0"}, wantBad: "SWITCHBOARD_UPSTREAM_MAX_ADMITTED"},
		{name: "tenant part not a number", env: map[string]string{"SWITCHBOARD_TENANT_MAX_ADMITTED": "half"}, wantBad: "SWITCHBOARD_TENANT_MAX_ADMITTED"},
		{name: "tenant part zero", env: map[string]string{"SWITCHBOARD_TENANT_MAX_ADMITTED": "0"}, wantBad: "SWITCHBOARD_TENANT_MAX_ADMITTED"},
		{name: "in-flight with spaces", env: map[string]string{"SWITCHBOARD_MAX_INFLIGHT": " 16 "}, want: overloadConfig{MaxInFlight: 16}},
		{name: "in-flight too many", env: map[string]string{"SWITCHBOARD_MAX_INFLIGHT": "1000001"}, wantBad: "SWITCHBOARD_MAX_INFLIGHT"},
		{name: "slow upstream not a duration", env: map[string]string{"SWITCHBOARD_UPSTREAM_SLOW": "1"}, wantBad: "SWITCHBOARD_UPSTREAM_SLOW"},
		{name: "slow upstream zero", env: map[string]string{"SWITCHBOARD_UPSTREAM_SLOW": "0s"}, wantBad: "SWITCHBOARD_UPSTREAM_SLOW"},
		{name: "read timeout not a duration", env: map[string]string{"SWITCHBOARD_UPSTREAM_READ_TIMEOUT": "5"}, wantBad: "SWITCHBOARD_UPSTREAM_READ_TIMEOUT"},
		{name: "write timeout negative", env: map[string]string{"SWITCHBOARD_UPSTREAM_WRITE_TIMEOUT": "-1s"}, wantBad: "SWITCHBOARD_UPSTREAM_WRITE_TIMEOUT"},
		{name: "drain zero", env: map[string]string{"SWITCHBOARD_DRAIN_TIMEOUT": "0s"}, wantBad: "SWITCHBOARD_DRAIN_TIMEOUT"},
		{name: "drain not a duration", env: map[string]string{"SWITCHBOARD_DRAIN_TIMEOUT": "soon"}, wantBad: "SWITCHBOARD_DRAIN_TIMEOUT"},
		{name: "drain lead", env: map[string]string{"SWITCHBOARD_DRAIN_LEAD": "12s"}, want: overloadConfig{DrainLead: 12 * time.Second}},
		{name: "drain lead off", env: map[string]string{"SWITCHBOARD_DRAIN_LEAD": "0s"}, want: overloadConfig{NoDrainLead: true}},
		{name: "drain lead negative", env: map[string]string{"SWITCHBOARD_DRAIN_LEAD": "-1s"}, wantBad: "SWITCHBOARD_DRAIN_LEAD"},
	}
	for _, c := range []struct {
		cfg  overloadConfig
		want time.Duration
	}{{overloadConfig{}, defaultDrainLead}, {overloadConfig{DrainLead: 12 * time.Second}, 12 * time.Second}, {overloadConfig{NoDrainLead: true}, 0}} {
		if got := c.cfg.lead(); got != c.want {
			t.Errorf("%+v: lead %s, want %s", c.cfg, got, c.want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			get := func(name string) string {
				if v, ok := tt.env[name]; ok {
					return v
				}
				return tableDefault(envVars(), name)
			}
			got, err := loadOverloadConfig(get)
			if tt.wantBad != "" {
				var ce *configError
				if !errors.As(err, &ce) || ce.Name != tt.wantBad {
					t.Fatalf("error = %v, want one naming %s", err, tt.wantBad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The table's drain defaults hold wherever a case does not set its own.
			want := tt.want
			if want.DrainTimeout == 0 {
				want.DrainTimeout = defaultDrainTimeout
			}
			if want.DrainLead == 0 && !want.NoDrainLead {
				want.DrainLead = defaultDrainLead
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}
