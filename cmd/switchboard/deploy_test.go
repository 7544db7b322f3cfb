package main

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v4"
)

// deployDir is the repository's deploy directory, seen from this package.
const deployDir = "../../deploy"

// nodeService names a Switchboard node of deploy/compose.yaml.
var nodeService = regexp.MustCompile(`^switchboard-\d+$`)

// loadCompose loads deploy/compose.yaml as `docker compose` does: anchors merged,
// variables interpolated, validated against the Compose specification.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	path, err := filepath.Abs(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  filepath.Dir(path),
		ConfigFiles: []types.ConfigFile{{Filename: path}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) { o.SetProjectName("switchboard", true) })
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return p
}

// envNames are the variable names of an environment.
func envNames(env types.MappingWithEquals) []string {
	var out []string
	for k := range env {
		out = append(out, k+"=x")
	}
	return out
}

// TestComposeFleet checks the invariants of deploy/compose.yaml: three nodes built
// from the repository's Dockerfile with one configuration, the same key file on one
// shared volume, PostgreSQL and Redis of the project, a readiness healthcheck the
// binary answers, only variables the binary knows, and a round-robin load balancer
// without stickiness in front of exactly those nodes.
func TestComposeFleet(t *testing.T) {
	t.Parallel()
	p := loadCompose(t)
	root, _ := filepath.Abs("../..")

	var nodes []types.ServiceConfig
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range p.Services {
			if !yield(n) {
				return
			}
		}
	}) {
		if nodeService.MatchString(name) {
			nodes = append(nodes, p.Services[name])
		}
	}
	if len(nodes) != 3 {
		t.Fatalf("compose.yaml has %d switchboard nodes, want 3", len(nodes))
	}
	first := nodes[0]
	for _, n := range nodes {
		if n.Build == nil || n.Build.Context != root || n.Build.Dockerfile != "Dockerfile" {
			t.Errorf("%s: build %+v; want the repository's Dockerfile (context %s)", n.Name, n.Build, root)
		}
		if diff := cmp.Diff(first.Environment, n.Environment); diff != "" {
			t.Errorf("%s's environment differs from %s's (-%s +%s):\n%s", n.Name, first.Name, first.Name, n.Name, diff)
		}
		if u := unknownVars(envNames(n.Environment)); len(u) > 0 {
			t.Errorf("%s sets variables the binary does not know: %v", n.Name, u)
		}
		// The healthcheck asks the node's own readiness probe.
		if hc := n.HealthCheck; hc == nil || !slices.Equal(hc.Test, types.HealthCheckTest{"CMD", "/usr/local/bin/switchboard", "probe", "/readyz"}) {
			t.Errorf("%s: healthcheck %+v; want CMD switchboard probe /readyz", n.Name, n.HealthCheck)
		}
	}
	env := func(k string) string {
		if v := first.Environment[k]; v != nil {
			return *v
		}
		return ""
	}

	// One key for every node: the key file is on a named volume all of them mount.
	keyFile := env("SWITCHBOARD_KEY_FILE")
	if keyFile == "" || env("SWITCHBOARD_KEYRING") == "vault" {
		t.Fatalf("nodes seal with %q (SWITCHBOARD_KEY_FILE); want a key file", keyFile)
	}
	for _, n := range nodes {
		i := slices.IndexFunc(n.Volumes, func(v types.ServiceVolumeConfig) bool {
			return v.Type == types.VolumeTypeVolume && strings.HasPrefix(keyFile, v.Target+"/")
		})
		if i < 0 || n.Volumes[i].Source != "keys" {
			t.Errorf("%s: the key file %s is not on the shared volume keys: %+v", n.Name, keyFile, n.Volumes)
		}
	}

	// PostgreSQL and Redis are the project's own services.
	serviceImage := func(what, raw, scheme string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != scheme {
			t.Errorf("%s = %q; want a %s:// URL", what, raw, scheme)
			return ""
		}
		svc, ok := p.Services[u.Hostname()]
		if !ok {
			t.Errorf("%s names host %q, which is no service of compose.yaml", what, u.Hostname())
			return ""
		}
		return svc.Image
	}
	if img := serviceImage("SWITCHBOARD_DATABASE_URL", env("SWITCHBOARD_DATABASE_URL"), "postgres"); !strings.HasPrefix(img, "postgres:") {
		t.Errorf("SWITCHBOARD_DATABASE_URL's service runs %q, want a postgres image", img)
	}
	if img := serviceImage("SWITCHBOARD_REDIS_URL", env("SWITCHBOARD_REDIS_URL"), "redis"); !strings.HasPrefix(img, "redis:") {
		t.Errorf("SWITCHBOARD_REDIS_URL's service runs %q, want a redis image", img)
	}
	if _, err := loadConfig(lookupEnv(envNamesValues(first.Environment))); err != nil {
		t.Errorf("the nodes' configuration is refused: %v", err)
	}

	// The load balancer: HAProxy with the configuration beside compose.yaml, round
	// robin over exactly the three nodes, no stickiness, readiness checks.
	lb, ok := p.Services["lb"]
	if !ok || !strings.HasPrefix(lb.Image, "haproxy:") {
		t.Fatalf("compose.yaml has no lb service running haproxy: %+v", lb)
	}
	cfgPath := filepath.Join(p.WorkingDir, "haproxy", "haproxy.cfg")
	if !slices.ContainsFunc(lb.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Source == cfgPath && v.Target == "/usr/local/etc/haproxy/haproxy.cfg"
	}) {
		t.Errorf("lb does not mount %s as its configuration: %+v", cfgPath, lb.Volumes)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	checkHAProxy(t, cfgPath, names)
}

// envNamesValues is an environment as KEY=VALUE entries.
func envNamesValues(env types.MappingWithEquals) []string {
	var out []string
	for k, v := range env {
		if v != nil {
			out = append(out, k+"="+*v)
		}
	}
	return out
}

// checkHAProxy reads an HAProxy configuration's backend: round robin, nothing that
// makes a client stick to a server, a readiness check on /readyz, and exactly the
// nodes as servers on the port they listen on.
func checkHAProxy(t *testing.T, path string, nodes []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var balance, check string
	var servers []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch {
		case fields[0] == "balance":
			balance = strings.Join(fields[1:], " ")
		case fields[0] == "cookie", strings.HasPrefix(fields[0], "stick"), fields[0] == "hash-type", fields[0] == "persist":
			t.Errorf("haproxy.cfg makes clients stick to a node: %q", sc.Text())
		case fields[0] == "option" && len(fields) >= 4 && fields[1] == "httpchk":
			check = fields[2] + " " + fields[3]
		case fields[0] == "server" && len(fields) >= 3:
			servers = append(servers, fields[1]+" "+fields[2])
		}
	}
	if balance != "roundrobin" {
		t.Errorf("haproxy.cfg balances %q, want roundrobin", balance)
	}
	if check != "GET /readyz" {
		t.Errorf("haproxy.cfg checks %q, want GET /readyz", check)
	}
	var want []string
	for _, n := range nodes {
		want = append(want, n+" "+n+":8080")
	}
	if diff := cmp.Diff(want, servers); diff != "" {
		t.Errorf("haproxy.cfg servers (-want +got):\n%s", diff)
	}
}

// k8sObject is what the test reads of a Kubernetes manifest.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas        int `yaml:"replicas"`
		SessionAffinity string
		Selector        yaml.Node `yaml:"selector"`
		MinAvailable    int       `yaml:"minAvailable"`
		Ports           []struct {
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int            `yaml:"terminationGracePeriodSeconds"`
				InitContainers                []k8sContainer `yaml:"initContainers"`
				Containers                    []k8sContainer `yaml:"containers"`
				Volumes                       []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
					EmptyDir any `yaml:"emptyDir"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	Env []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

// loadK8s reads every manifest of deploy/k8s by kind.
func loadK8s(t *testing.T) map[string]k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "k8s", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/k8s: %v", err)
	}
	out := map[string]k8sObject{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o k8sObject
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		if o.Kind == "" {
			t.Fatalf("%s has no kind", f)
		}
		out[o.Kind] = o
	}
	return out
}

// TestKubernetesFleet checks the invariants of deploy/k8s: a Deployment of three
// nodes whose readiness and liveness probes are paths the server answers, whose
// database, Redis and key file come from the Secret, and which sets only variables
// the binary knows; a Service without session affinity and a PodDisruptionBudget that
// select its pods.
func TestKubernetesFleet(t *testing.T) {
	t.Parallel()
	objs := loadK8s(t)
	d, ok := objs["Deployment"]
	if !ok {
		t.Fatal("deploy/k8s has no Deployment")
	}
	pods := d.Spec.Template.Metadata.Labels
	if d.Spec.Replicas != 3 {
		t.Errorf("Deployment replicas = %d, want 3", d.Spec.Replicas)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes: readiness %+v, liveness %+v; want /readyz and /healthz", c.ReadinessProbe, c.LivenessProbe)
	}
	if len(c.Ports) != 1 || c.ReadinessProbe == nil || c.Ports[0].Name != c.ReadinessProbe.HTTPGet.Port || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports %+v: want one named port 8080 that the probes use", c.Ports)
	}
	env := map[string]string{}
	fromSecret := map[string]string{}
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name+"=x")
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			fromSecret[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if u := unknownVars(names); len(u) > 0 {
		t.Errorf("the Deployment sets variables the binary does not know: %v", u)
	}
	if diff := cmp.Diff(map[string]string{"SWITCHBOARD_DATABASE_URL": "switchboard/database-url", "SWITCHBOARD_REDIS_URL": "switchboard/redis-url"}, fromSecret); diff != "" {
		t.Errorf("variables from the Secret (-want +got):\n%s", diff)
	}
	if env["SWITCHBOARD_ADDR"] != "0.0.0.0:8080" {
		t.Errorf("SWITCHBOARD_ADDR = %q; want 0.0.0.0:8080, the probes' port", env["SWITCHBOARD_ADDR"])
	}
	// The key file is on a volume that the init container fills from the Secret.
	keyFile := env["SWITCHBOARD_KEY_FILE"]
	mounted := func(ct k8sContainer, dir string) string {
		for _, m := range ct.VolumeMounts {
			if strings.HasPrefix(dir, m.MountPath+"/") {
				return m.Name
			}
		}
		return ""
	}
	keyVolume := mounted(c, keyFile)
	secretVolumes := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			secretVolumes[v.Name] = v.Secret.SecretName
		}
	}
	filled := false
	for _, ic := range d.Spec.Template.Spec.InitContainers {
		for _, m := range ic.VolumeMounts {
			if secretVolumes[m.Name] == "switchboard" && slices.ContainsFunc(ic.VolumeMounts, func(o struct {
				Name      string `yaml:"name"`
				MountPath string `yaml:"mountPath"`
			}) bool {
				return o.Name == keyVolume
			}) {
				filled = true
			}
		}
	}
	if keyFile == "" || keyVolume == "" || !filled {
		t.Errorf("the key file %q (volume %q) is not filled from the Secret switchboard by an init container", keyFile, keyVolume)
	}

	svc, ok := objs["Service"]
	if !ok {
		t.Fatal("deploy/k8s has no Service")
	}
	if svc.Spec.SessionAffinity != "" && svc.Spec.SessionAffinity != "None" {
		t.Errorf("Service sessionAffinity = %q, want None", svc.Spec.SessionAffinity)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != c.Ports[0].Name {
		t.Errorf("Service ports %+v; want the container's port %q", svc.Spec.Ports, c.Ports[0].Name)
	}
	var svcSelector map[string]string
	if err := svc.Spec.Selector.Decode(&svcSelector); err != nil || !selects(svcSelector, pods) {
		t.Errorf("Service selector %v does not select the pods %v (%v)", svcSelector, pods, err)
	}

	pdb, ok := objs["PodDisruptionBudget"]
	if !ok {
		t.Fatal("deploy/k8s has no PodDisruptionBudget")
	}
	var pdbSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	if err := pdb.Spec.Selector.Decode(&pdbSelector); err != nil || !selects(pdbSelector.MatchLabels, pods) {
		t.Errorf("PodDisruptionBudget selector %v does not select the pods %v (%v)", pdbSelector, pods, err)
	}
	if pdb.Spec.MinAvailable < 1 || pdb.Spec.MinAvailable >= d.Spec.Replicas {
		t.Errorf("PodDisruptionBudget minAvailable = %d; want from 1 to %d", pdb.Spec.MinAvailable, d.Spec.Replicas-1)
	}
}

// selects reports whether a label selector's labels (not empty) are all the pod's.
func selects(selector, pod map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if pod[k] != v {
			return false
		}
	}
	return true
}

// TestDeployProbesAnswer starts the server and asks every probe path the deployment
// files use: each must answer 200 on a node that is up.
func TestDeployProbesAnswer(t *testing.T) {
	t.Parallel()
	paths := map[string]bool{}
	for _, n := range loadCompose(t).Services {
		if n.HealthCheck != nil && len(n.HealthCheck.Test) == 4 && n.HealthCheck.Test[2] == "probe" {
			paths[n.HealthCheck.Test[3]] = true
		}
	}
	d := loadK8s(t)["Deployment"]
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range []*k8sProbe{c.ReadinessProbe, c.LivenessProbe} {
			if p != nil {
				paths[p.HTTPGet.Path] = true
			}
		}
	}
	if len(paths) < 2 {
		t.Fatalf("the deployment files use the probes %v; want /readyz and /healthz", paths)
	}
	dir := t.TempDir()
	lines, stop := startServe(t, env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": filepath.Join(dir, "data"), "SWITCHBOARD_LOG_LEVEL": "error"}), 1)
	defer stop()
	base := strings.TrimPrefix(lines[0], "Switchboard is listening on ")
	for p := range paths {
		if !probePaths[p] {
			t.Errorf("%s is not a probe `switchboard probe` asks", p)
		}
		res, err := http.Get(base + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s answered %d, want 200", p, res.StatusCode)
		}
	}
}

// TestDeployDrainTimings: each shipped deployment gives a node's shutdown the time it
// takes, and its balancer the time to see it leave before it refuses anything. The
// node's drain lead (/readyz 503 while it still serves) is longer than HAProxy's checks
// (inter × fall) and the Kubernetes readiness probe (period × failures) take to see it;
// the time a node is given to stop (Kubernetes' grace period, compose's
// stop_grace_period) is longer than its lead, its calls' drain and its graceful
// shutdown together.
func TestDeployDrainTimings(t *testing.T) {
	t.Parallel()
	shutdown := func(lead time.Duration) time.Duration { return lead + defaultDrainTimeout + shutdownTimeout }

	f, err := os.Open(filepath.Join(deployDir, "haproxy", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var detect time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "default-server" {
			continue
		}
		inter, fall := time.Duration(0), 0
		for i := 1; i+1 < len(fields); i++ {
			switch fields[i] {
			case "inter":
				inter, _ = time.ParseDuration(fields[i+1])
			case "fall":
				fall, _ = strconv.Atoi(fields[i+1])
			}
		}
		detect = inter * time.Duration(fall)
	}
	if detect <= 0 || defaultDrainLead <= detect {
		t.Errorf("HAProxy takes up to %s to see a node leave; the default drain lead %s must be longer", detect, defaultDrainLead)
	}

	d := loadK8s(t)["Deployment"]
	c := d.Spec.Template.Spec.Containers[0]
	lead := defaultDrainLead
	for _, e := range c.Env {
		if e.Name == "SWITCHBOARD_DRAIN_LEAD" {
			if lead, err = time.ParseDuration(e.Value); err != nil {
				t.Fatalf("SWITCHBOARD_DRAIN_LEAD=%q: %v", e.Value, err)
			}
		}
	}
	probe := time.Duration(c.ReadinessProbe.PeriodSeconds*max(c.ReadinessProbe.FailureThreshold, 1)) * time.Second
	if lead <= probe {
		t.Errorf("the readiness probe takes up to %s to see a node leave; its drain lead %s must be longer", probe, lead)
	}
	if grace := time.Duration(d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; grace <= shutdown(lead) {
		t.Errorf("terminationGracePeriodSeconds is %s; a node's shutdown takes up to %s (lead %s, drain %s, shutdown %s)", grace, shutdown(lead), lead, defaultDrainTimeout, shutdownTimeout)
	}

	for _, n := range loadCompose(t).Services {
		if !strings.HasPrefix(n.Name, "switchboard-") {
			continue
		}
		var grace time.Duration
		if n.StopGracePeriod != nil {
			grace = time.Duration(*n.StopGracePeriod)
		}
		if grace <= shutdown(defaultDrainLead) {
			t.Errorf("%s: stop_grace_period is %s; a node's shutdown takes up to %s", n.Name, grace, shutdown(defaultDrainLead))
		}
	}
}
