package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/workflows"
)

// subscriber is a providers.Caller whose session can be subscribed: it records what
// it was subscribed to, or refuses with err.
type subscriber struct {
	uris []string
	err  error
}

func (s *subscriber) Log(map[string]any) {}
func (s *subscriber) Ask(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("not asked")
}
func (s *subscriber) SubscribeResource(_ context.Context, uri string) error {
	if s.err != nil {
		return s.err
	}
	s.uris = append(s.uris, uri)
	return nil
}

// TestSubscribeFlowTool: subscribe_flow subscribes the calling session to the
// instance's resource and answers its URI and status; without a session to subscribe
// (REST) it says how to follow the instance instead; a session that cannot be
// subscribed is told why; another person's instance and a missing one are refused
// alike, subscribing nothing; instance_id is required.
func TestSubscribeFlowTool(t *testing.T) {
	t.Parallel()
	svc, p, _ := workflows.ServiceForTest(t)
	reg := hubRegistry(t, svc)
	ctx := switchboard.WithPrincipal(context.Background(), p)
	src := "name: echo\nparameters: {type: object, properties: {k: {type: string}}, required: [k]}\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"${{ params.k }}\"}}\n"
	if got := callTool(t, ctx, reg, p, "create_workflow", map[string]any{"definition": src}); got["status"] != "created" {
		t.Fatalf("create = %v", got)
	}
	v, err := svc.Start(ctx, p, "echo", json.RawMessage(`{"k":"a"}`), workflows.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uri := "switchboard://flows/" + v.ID

	sess := &subscriber{}
	got := callTool(t, providers.WithCaller(ctx, sess), reg, p, "subscribe_flow", map[string]any{"instance_id": v.ID})
	status, _ := got["status"].(map[string]any)
	if got["uri"] != uri || got["subscribed"] != true || status["instance_id"] != v.ID || status["name"] != "echo" || status["state"] != "working" {
		t.Errorf("subscribe_flow = %v", got)
	}
	if len(sess.uris) != 1 || sess.uris[0] != uri {
		t.Errorf("the session was subscribed to %v; want %s", sess.uris, uri)
	}

	rest := callTool(t, ctx, reg, p, "subscribe_flow", map[string]any{"instance_id": v.ID})
	if rest["subscribed"] != false || rest["uri"] != uri || !strings.Contains(rest["message"].(string), "resources/subscribe") {
		t.Errorf("subscribe_flow without a session = %v", rest)
	}
	full := &subscriber{err: errors.New("this session already follows 256 resources, the most it may")}
	if got := callTool(t, providers.WithCaller(ctx, full), reg, p, "subscribe_flow", map[string]any{"instance_id": v.ID}); got["subscribed"] != false || !strings.Contains(got["message"].(string), "256 resources") {
		t.Errorf("subscribe_flow on a session that cannot take it = %v", got)
	}

	other := p
	other.UserID = "usr_other"
	octx := switchboard.WithPrincipal(context.Background(), other)
	theirs := &subscriber{}
	refused := callTool(t, providers.WithCaller(octx, theirs), reg, other, "subscribe_flow", map[string]any{"instance_id": v.ID})
	missing := callTool(t, providers.WithCaller(octx, theirs), reg, other, "subscribe_flow", map[string]any{"instance_id": "run_missing"})
	if refused["error_text"] == nil || strings.ReplaceAll(refused["error_text"].(string), v.ID, "run_missing") != missing["error_text"] || len(theirs.uris) != 0 {
		t.Errorf("another person's subscribe_flow = %v (a missing instance: %v), subscribed %v; want the same refusal, nothing subscribed", refused, missing, theirs.uris)
	}
	if got := callTool(t, ctx, reg, p, "subscribe_flow", map[string]any{"instance_id": " "}); !strings.Contains(got["error_text"].(string), "instance_id") {
		t.Errorf("subscribe_flow without an instance = %v; want instance_id named", got)
	}
}
