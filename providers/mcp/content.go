package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
)

// HubURIPrefix starts the hub's URI of every resource of a remote server:
// switchboard://mcp/<server>/<the resource's URI on the server>.
const HubURIPrefix = "switchboard://mcp/"

// HubURI is the hub's URI of a resource (or URI template) of the server named server:
// the server's URI as it is, after HubURIPrefix and the server's name, so a template
// stays a template and the hub maps a read back by cutting the prefix.
func HubURI(server, uri string) string { return HubURIPrefix + server + "/" + uri }

// SplitHubURI returns the server's name and the server's own URI of a hub URI made by
// HubURI; ok is false for any other URI.
func SplitHubURI(uri string) (server, remote string, ok bool) {
	rest, ok := strings.CutPrefix(uri, HubURIPrefix)
	if !ok {
		return "", "", false
	}
	server, remote, ok = strings.Cut(rest, "/")
	if !ok || server == "" || remote == "" {
		return "", "", false
	}
	return server, remote, true
}

// Content is what a remote server offers beside its tools, as the hub serves it:
// prompts named <server>_<prompt>, resources and resource templates under the hub's
// URIs (HubURI).
type Content struct {
	Server string
	// Resources is set when the server announced resources: any of them can be read by
	// its hub URI, listed or not (a resource_link of a tool's result).
	Resources bool
	Prompts   []mcpgo.Prompt
	Listed    []mcpgo.Resource
	Templates []mcpgo.ResourceTemplate
}

// content is a session's cached Content and the server's names of its prompts.
type content struct {
	Content
	prompts map[string]string // hub prompt name -> the server's
}

// Content lists the prompts, resources and resource templates of the connection's
// server (none of a kind the server did not announce), read once per session and again
// after the server says a list changed. The caller decides who may see them: the same
// principals as the connection's tools.
func (s *Service) Content(ctx context.Context, tenant switchboard.TenantID, id string) (Content, error) {
	var out Content
	err := s.withSession(ctx, tenant, id, "list the prompts and resources of", func(ctx context.Context, sess *session) error {
		c, err := s.contentOf(ctx, sess)
		if err != nil {
			return err
		}
		out = c.Content
		return nil
	})
	return out, err
}

// GetPrompt gets the prompt named name (the hub's name, <server>_<prompt>) from the
// connection's server, with the hub's URIs in its embedded resources and links.
func (s *Service) GetPrompt(ctx context.Context, tenant switchboard.TenantID, id, name string, args map[string]string) (*mcpgo.GetPromptResult, error) {
	var out *mcpgo.GetPromptResult
	err := s.withSession(ctx, tenant, id, "get the prompt "+name+" of", func(ctx context.Context, sess *session) error {
		c, err := s.contentOf(ctx, sess)
		if err != nil {
			return err
		}
		remote, ok := c.prompts[name]
		if !ok {
			return switchboard.NotFound("prompt " + name)
		}
		req := mcpgo.GetPromptRequest{}
		req.Params.Name = remote
		req.Params.Arguments = args
		res, err := sess.client.GetPrompt(ctx, req)
		if err != nil {
			return err
		}
		for i := range res.Messages {
			res.Messages[i].Content = hubContent(sess.name, res.Messages[i].Content)
		}
		out = res
		return nil
	})
	return out, err
}

// ReadResource reads the resource of the hub URI uri (see HubURI) from the
// connection's server; the contents carry the hub's URIs. A URI of another server is
// not found.
func (s *Service) ReadResource(ctx context.Context, tenant switchboard.TenantID, id, uri string) ([]mcpgo.ResourceContents, error) {
	var out []mcpgo.ResourceContents
	err := s.withSession(ctx, tenant, id, "read a resource of", func(ctx context.Context, sess *session) error {
		server, remote, ok := SplitHubURI(uri)
		if !ok || server != sess.name {
			return switchboard.NotFound("resource " + uri)
		}
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = remote
		res, err := sess.client.ReadResource(ctx, req)
		if err != nil {
			return err
		}
		for i, rc := range res.Contents {
			res.Contents[i] = hubContents(sess.name, rc)
		}
		out = res.Contents
		return nil
	})
	return out, err
}

// withSession runs fn on the connection's session within the call timeout. When the
// session turns out to be gone, a new one is opened and fn runs once more. A failure
// is the server's error, naming it and never a credential; a JSON-RPC error of the
// server (an unknown prompt or resource) is not found.
func (s *Service) withSession(ctx context.Context, tenant switchboard.TenantID, id, doing string, fn func(context.Context, *session) error) error {
	for attempt := 0; ; attempt++ {
		sess, err := s.session(ctx, tenant, id, 0)
		if err != nil {
			return err
		}
		cs := &callStatus{}
		cctx, cancel := context.WithTimeout(context.WithValue(ctx, callStatusKey{}, cs), s.timeout)
		err = fn(cctx, sess)
		cancel()
		if err == nil {
			return nil
		}
		if attempt == 0 && gone(err, cs) && ctx.Err() == nil {
			s.drop(sess)
			continue
		}
		if se := serverRefusal(sess.name, err); se != nil {
			return se
		}
		return s.upstreamError(sess.name, doing, err, cs)
	}
}

// serverRefusal is the hub's error for a JSON-RPC error the server answered: an unknown
// resource or method is not found, bad parameters (a missing prompt argument) invalid.
// Errors of the hub's own pass as they are; any other failure is nil.
func serverRefusal(server string, err error) error {
	var se *switchboard.Error
	if errors.As(err, &se) {
		return se
	}
	code := switchboard.CodeNotFound
	switch {
	case errors.Is(err, mcpgo.ErrResourceNotFound), errors.Is(err, mcpgo.ErrMethodNotFound):
	case errors.Is(err, mcpgo.ErrInvalidParams):
		code = switchboard.CodeInvalid
	default:
		return nil
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return &switchboard.Error{Code: code, Message: fmt.Sprintf("the remote MCP server %s answered: %s", server, msg), Err: err}
}

// contentOf returns the session's content, listing it on first use.
func (s *Service) contentOf(ctx context.Context, sess *session) (*content, error) {
	sess.mu.Lock()
	c := sess.content
	sess.mu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := s.listContent(ctx, sess)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	sess.content = c
	sess.mu.Unlock()
	return c, nil
}

// listContent reads the server's prompts, resources and resource templates, each kind
// only if the server announced it, and renames them for the hub. Prompts whose names
// collide once normalised keep the first.
func (s *Service) listContent(ctx context.Context, sess *session) (*content, error) {
	c := &content{Content: Content{Server: sess.name, Resources: sess.caps.Resources != nil, Prompts: []mcpgo.Prompt{}, Listed: []mcpgo.Resource{}, Templates: []mcpgo.ResourceTemplate{}}, prompts: map[string]string{}}
	if sess.caps.Prompts != nil {
		res, err := sess.client.ListPrompts(ctx, mcpgo.ListPromptsRequest{})
		if err != nil {
			return nil, fmt.Errorf("list prompts: %w", err)
		}
		for _, p := range res.Prompts {
			name := toolName(sess.name, p.Name)
			if _, dup := c.prompts[name]; dup {
				s.log.Warn("remote MCP prompt name collides once normalised; keeping the first", "server", sess.name, "prompt", p.Name, "as", name)
				continue
			}
			c.prompts[name] = p.Name
			if p.Title == "" {
				p.Title = p.Name
			}
			p.Name = name
			c.Prompts = append(c.Prompts, p)
		}
	}
	if sess.caps.Resources == nil {
		return c, nil
	}
	res, err := sess.client.ListResources(ctx, mcpgo.ListResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	for _, r := range res.Resources {
		r.URI = HubURI(sess.name, r.URI)
		c.Listed = append(c.Listed, r)
	}
	tres, err := sess.client.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
	if err != nil {
		// Templates are optional: a server with resources may not answer for them.
		s.log.Debug("list the remote MCP server's resource templates", "server", sess.name, "err", err)
		return c, nil
	}
	for _, t := range tres.ResourceTemplates {
		if t.URITemplate == nil {
			continue
		}
		raw, err := json.Marshal(HubURI(sess.name, t.URITemplate.Raw()))
		hub := &mcpgo.URITemplate{}
		if err == nil {
			err = hub.UnmarshalJSON(raw) // parses the template, where NewResourceTemplate would panic
		}
		if err != nil {
			s.log.Warn("remote MCP resource template", "server", sess.name, "template", t.URITemplate.Raw(), "err", err)
			continue
		}
		t.URITemplate = hub
		c.Templates = append(c.Templates, t)
	}
	return c, nil
}

// contentChanged forgets a session's content after the server said its prompts or
// resources changed, and tells the hub (its MCP sessions get list_changed).
func (s *Service) contentChanged(sess *session) {
	if sess.closed.Load() || sess.id == "" {
		return
	}
	sess.mu.Lock()
	sess.content = nil
	sess.mu.Unlock()
	s.changed(sess.tenant, sess.id)
}

// hubContent gives a content item of the server's (a tool result's, a prompt
// message's) the hub's URI where it names a resource: a resource_link, an embedded
// resource. Others are returned as they are.
func hubContent(server string, c mcpgo.Content) mcpgo.Content {
	switch v := c.(type) {
	case mcpgo.ResourceLink:
		v.URI = HubURI(server, v.URI)
		return v
	case *mcpgo.ResourceLink:
		l := *v
		l.URI = HubURI(server, l.URI)
		return l
	case mcpgo.EmbeddedResource:
		v.Resource = hubContents(server, v.Resource)
		return v
	case *mcpgo.EmbeddedResource:
		e := *v
		e.Resource = hubContents(server, e.Resource)
		return e
	}
	return c
}

// hubContents gives a resource's contents the hub's URI.
func hubContents(server string, rc mcpgo.ResourceContents) mcpgo.ResourceContents {
	switch v := rc.(type) {
	case mcpgo.TextResourceContents:
		v.URI = HubURI(server, v.URI)
		return v
	case *mcpgo.TextResourceContents:
		t := *v
		t.URI = HubURI(server, t.URI)
		return t
	case mcpgo.BlobResourceContents:
		v.URI = HubURI(server, v.URI)
		return v
	case *mcpgo.BlobResourceContents:
		b := *v
		b.URI = HubURI(server, b.URI)
		return b
	}
	return rc
}
