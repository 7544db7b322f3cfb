package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// ToolRunner runs tools for the REST API, through the same router as MCP calls: the
// same ownership checks, validation and audit.
type ToolRunner interface {
	// Tools lists the tools the principal may call, with their connections.
	Tools(ctx context.Context, p switchboard.Principal) ([]router.Binding, error)
	// Execute runs one call.
	Execute(ctx context.Context, p switchboard.Principal, req router.Request) (any, error)
	// Refused records the audit row of a call refused before it reached Execute (its
	// connection could not be chosen).
	Refused(p switchboard.Principal, req router.Request, err error)
	// ConnectionFor is the connection a call runs on: the one named, or the caller's
	// only connection the tool can run on (none for a tool that needs none).
	ConnectionFor(ctx context.Context, p switchboard.Principal, tool, named string) (string, error)
	// Check checks a call as Execute would, without running or auditing it.
	Check(ctx context.Context, p switchboard.Principal, req router.Request) (router.Prepared, error)
}

// toolConnection is a connection a tool may run on.
type toolConnection struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Owner is the owner's email on a connection someone else shared with the caller.
	Owner string `json:"owner,omitempty"`
}

// callableTool is a tool the caller may call now.
type callableTool struct {
	Tool        string           `json:"tool"`
	Provider    string           `json:"provider"`
	Connections []toolConnection `json:"connections"`
}

// listTools lists the tools the caller may call, each with the connections it can run
// on: for an agent's key, its agent's tools, each on its bound connection (the router
// narrows the list).
func (s *server) listTools(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	bindings, err := s.tools().Tools(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	owners, err := s.ownerNames(c.Request.Context(), p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]callableTool, 0, len(bindings))
	for _, b := range bindings {
		ct := callableTool{Tool: b.Tool.Name, Provider: b.Tool.Provider.Name, Connections: make([]toolConnection, 0, len(b.Connections))}
		for _, r := range b.Connections {
			tc := toolConnection{ID: r.ID, Label: r.Label}
			if r.Owner != p.UserID {
				tc.Owner = owners[r.Owner]
			}
			ct.Connections = append(ct.Connections, tc)
		}
		out = append(out, ct)
	}
	c.JSON(http.StatusOK, gin.H{"tools": out})
}

// callToolRequest runs a tool. ConnectionID may be left out when the caller has exactly
// one connection the tool can run on.
type callToolRequest struct {
	ConnectionID string          `json:"connection_id"`
	Arguments    json.RawMessage `json:"arguments"`
	// Check asks only whether the call would be taken (tool, connection, arguments) and
	// whether a person must confirm it; nothing runs.
	Check bool `json:"check"`
}

// checkResult answers a call made with check: it would be taken, on that account, and
// whether the caller's confirm policy wants a person's confirmation first.
type checkResult struct {
	Tool              string `json:"tool"`
	ConnectionID      string `json:"connection_id,omitempty"`
	Account           string `json:"account,omitempty"`
	NeedsConfirmation bool   `json:"needs_confirmation"`
}

// callResult is the answer to a tool call: the operation's structured output.
type callResult struct {
	Tool         string `json:"tool"`
	ConnectionID string `json:"connection_id"`
	Result       any    `json:"result"`
	// AuditID is the id of the call's audit row, committed before this answer.
	AuditID string `json:"audit_id,omitempty"`
}

// callTool runs one tool through the router for the caller: "Try it" in the UI.
func (s *server) callTool(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req callToolRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	args := req.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	ctx := c.Request.Context()
	name := c.Param("tool")
	connID, err := s.connectionFor(ctx, p, name, strings.TrimSpace(req.ConnectionID))
	if err != nil {
		s.tools().Refused(p, router.Request{Tool: name, Args: args}, err)
		s.fail(c, err)
		return
	}
	if req.Check {
		pc, err := s.tools().Check(ctx, p, router.Request{Tool: name, ConnectionID: connID, Args: args})
		if err != nil {
			s.fail(c, err)
			return
		}
		c.JSON(http.StatusOK, checkResult{Tool: name, ConnectionID: connID, Account: pc.Account(), NeedsConfirmation: pc.NeedsConfirm})
		return
	}
	var ref router.AuditRef
	out, err := s.tools().Execute(router.WithAuditRef(ctx, &ref), p, router.Request{Tool: name, ConnectionID: connID, Args: args})
	if err != nil {
		s.fail(c, err)
		return
	}
	raw, err := providers.MarshalOutput(out)
	if err != nil {
		s.fail(c, switchboard.Internal(fmt.Errorf("encode %s output: %w", name, err)))
		return
	}
	c.JSON(http.StatusOK, callResult{Tool: name, ConnectionID: connID, Result: raw, AuditID: ref.ID})
}

// connectionFor is the connection a tool runs on: the one named, or the caller's only
// connection the tool can run on.
func (s *server) connectionFor(ctx context.Context, p switchboard.Principal, tool, named string) (string, error) {
	if p.Kind == switchboard.PrincipalAgent {
		id, err := s.agentConnection(ctx, p, tool, named)
		if switchboard.CodeOf(err) != switchboard.CodeNotFound {
			return id, err
		}
		// Not among its picks: one of the tools every caller has (the run tools) runs
		// on no connection; any other stays refused as not the agent's.
		if id, rerr := s.tools().ConnectionFor(ctx, p, tool, named); rerr == nil {
			return id, nil
		}
		return "", err
	}
	return s.tools().ConnectionFor(ctx, p, tool, named)
}

// tools is the configured runner, or one that says there is none.
func (s *server) tools() ToolRunner {
	if s.Tools == nil {
		return noTools{}
	}
	return s.Tools
}

type noTools struct{}

func (noTools) ConnectionFor(_ context.Context, _ switchboard.Principal, tool, _ string) (string, error) {
	return "", switchboard.NotFound("tool " + tool + " (connect an account of its provider first)")
}

func (noTools) Tools(context.Context, switchboard.Principal) ([]router.Binding, error) {
	return nil, nil
}

func (noTools) Refused(switchboard.Principal, router.Request, error) {}

func (noTools) Check(context.Context, switchboard.Principal, router.Request) (router.Prepared, error) {
	return router.Prepared{}, switchboard.Errorf(switchboard.CodeUnavailable, "this server runs no tools")
}

func (noTools) Execute(context.Context, switchboard.Principal, router.Request) (any, error) {
	return nil, switchboard.Errorf(switchboard.CodeUnavailable, "this server runs no tools")
}
