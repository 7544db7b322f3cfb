package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// RunService starts, reads and cancels asynchronous runs (the runs executor). Every
// method answers about the caller's own runs only.
type RunService interface {
	Start(ctx context.Context, p switchboard.Principal, c runs.Call) (runs.View, error)
	Get(ctx context.Context, p switchboard.Principal, id string) (runs.View, error)
	List(ctx context.Context, p switchboard.Principal, o runs.ListOptions) ([]runs.View, string, error)
	Cancel(ctx context.Context, p switchboard.Principal, id string) (runs.View, error)
}

// startRunRequest starts a run: a tool, its arguments, and the connection (which may be
// left out when the caller has exactly one the tool can run on).
type startRunRequest struct {
	Tool         string          `json:"tool"`
	ConnectionID string          `json:"connection_id"`
	Arguments    json.RawMessage `json:"arguments"`
}

// startRun starts a tool call in the background and answers 202 with the run at once.
func (s *server) startRun(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.Runs == nil {
		s.fail(c, switchboard.Errorf(switchboard.CodeUnavailable, "this server runs no asynchronous runs"))
		return
	}
	var req startRunRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := required([2]string{"tool", req.Tool}); err != nil {
		s.fail(c, err)
		return
	}
	args := req.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	connID, err := s.connectionFor(c.Request.Context(), p, req.Tool, strings.TrimSpace(req.ConnectionID))
	if err != nil {
		s.tools().Refused(p, router.Request{Tool: req.Tool, Args: args}, err)
		s.fail(c, err)
		return
	}
	v, err := s.Runs.Start(c.Request.Context(), p, runs.Call{Tool: req.Tool, ConnectionID: connID, Args: args, Origin: runs.OriginAsync})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/api/runs/"+v.ID)
	c.JSON(http.StatusAccepted, v)
}

// listRuns lists the caller's own runs, newest first: ?state=, ?limit=, ?cursor=.
func (s *server) listRuns(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.Runs == nil {
		c.JSON(http.StatusOK, gin.H{"runs": []runs.View{}})
		return
	}
	o := runs.ListOptions{State: runs.State(c.Query("state")), Cursor: c.Query("cursor")}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			s.fail(c, switchboard.Invalid("limit", "must be a whole number"))
			return
		}
		o.Limit = n
	}
	list, next, err := s.Runs.List(c.Request.Context(), p, o)
	if err != nil {
		s.fail(c, err)
		return
	}
	body := gin.H{"runs": list}
	if next != "" {
		body["next_cursor"] = next
	}
	c.JSON(http.StatusOK, body)
}

// getRun returns one of the caller's runs, with its output once completed.
func (s *server) getRun(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.Runs == nil {
		s.fail(c, switchboard.NotFound("run"))
		return
	}
	v, err := s.Runs.Get(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// cancelRun cancels one of the caller's runs that has not ended.
func (s *server) cancelRun(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.Runs == nil {
		s.fail(c, switchboard.NotFound("run"))
		return
	}
	v, err := s.Runs.Cancel(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}
