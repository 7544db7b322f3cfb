package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// The principals of the surface matrix.
const (
	owner       = "owner"
	admin       = "admin"
	member      = "member"       // owns the private GitHub connection
	otherMember = "other member" // a member who does not
	agentKey    = "agent key"    // the owner's agent "matrix"
	oauthGrant  = "OAuth grant"  // an MCP client the owner allowed, at the tenant URL
	// confirmKey is the key of the owner's agent "careful", which has a person confirm
	// every call on its approval page (confirm always, approval person).
	confirmKey = "agent key (approval by a person)"
	// askKey is the key of the owner's agent "asking", which confirms every call with
	// whoever the client asks (confirm always, approval relay: elicitation).
	askKey = "agent key (confirm always)"
)

// matrixRig is one `switchboard serve` with every kind of tool set up, shared by every
// cell of the surface matrix.
type matrixRig struct {
	t      *testing.T
	srv    *server
	github *recorder
	front  *redirectingFront
	notes  *notesAPI
	keys   map[string]string // principal → bearer credential
	// The connections: the owner's shared GitHub, the member's private GitHub, the
	// notes API's (shared) and the remote MCP server's (shared).
	shared, private, notesConn, docsConn string
	agentID, agentURL                    string // the agent "matrix"
	carefulID, carefulURL                string // the agent "careful"
	askingURL                            string // the agent "asking"
	person                               *person
	// principalIDs are the principals as audit rows name them ("user:…", "agent:…").
	principalIDs map[string]string
	sessions     map[string]*matrixSession
	// stepSaved holds, per step workflow the owner could not save, why.
	stepSaved map[string]string
	// pendingAudits are the answered calls whose audit rows auditCells checks.
	pendingAudits []pendingAudit
}

// privateLogin is the GitHub login of the member's private connection.
const privateLogin = githubBetaLogin

func (r *matrixRig) api(principal string) *apiClient {
	return &apiClient{Base: r.srv.BaseURL, Key: r.keys[principal]}
}

// must sends a REST request that must answer status, and decodes the answer into out.
func (r *matrixRig) must(principal, method, path string, in any, status int, out any) {
	r.t.Helper()
	got, body := r.api(principal).Do(r.t, method, path, in)
	if got != status {
		r.t.Fatalf("%s %s as %s: %d, want %d: %s", method, path, principal, got, status, body)
	}
	if out != nil {
		mustJSON(r.t, body, out)
	}
}

// newMatrixRig starts the hub against the fakes and sets up the tenant: the owner's
// admin and two members, a GitHub connection shared by the owner and a private one of
// the member, an API imported by its OpenAPI description, a remote MCP server, a saved
// workflow, two agents with keys, and an OAuth grant of the owner's.
func newMatrixRig(t *testing.T, bin string) *matrixRig {
	t.Helper()
	gh, rec := fakeGitHub(t)
	r := &matrixRig{t: t, github: rec, front: newRedirectingFront(t, gh.URL), notes: newNotesAPI(t), keys: map[string]string{},
		principalIDs: map[string]string{}, sessions: map[string]*matrixSession{}}
	remoteURL := fakeRemoteMCPWith(t, addDocsExtras)
	// The fakes listen on loopback, which the hub refuses unless told.
	r.srv = startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": r.front.URL, "SWITCHBOARD_REMOTE_MCP_ALLOW_CIDRS": "127.0.0.1/32"})
	r.keys[owner] = r.srv.AdminKey
	for principal, role := range map[string]string{admin: "admin", member: "member", otherMember: "member"} {
		var u struct {
			ID     string `json:"id"`
			APIKey struct {
				Key string `json:"key"`
			} `json:"api_key"`
		}
		r.must(owner, http.MethodPost, "/api/users", map[string]string{"email": strings.ReplaceAll(principal, " ", "-") + "@matrix.test", "role": role}, http.StatusCreated, &u)
		r.keys[principal] = u.APIKey.Key
		r.principalIDs[principal] = "user:" + u.ID
	}
	var users struct {
		Users []struct {
			ID   string `json:"id"`
			Role string `json:"role"`
		} `json:"users"`
	}
	r.must(owner, http.MethodGet, "/api/users", nil, http.StatusOK, &users)
	for _, u := range users.Users {
		if u.Role == "owner" {
			r.principalIDs[owner] = "user:" + u.ID
			r.principalIDs[oauthGrant] = "user:" + u.ID // the grant acts as the person who allowed it
		}
	}
	// The run tools (switchboard_run_async and the rest) are listed everywhere.
	settings := map[string]any{}
	r.must(owner, http.MethodGet, "/api/mcp-settings", nil, http.StatusOK, &settings)
	delete(settings, "updated_at")
	settings["run_tools"] = "on"
	r.must(owner, http.MethodPut, "/api/mcp-settings", settings, http.StatusOK, nil)
	var conn struct {
		ID string `json:"id"`
	}
	r.must(owner, http.MethodPost, "/api/connections", map[string]any{"provider": "github", "token": githubToken, "shared": true}, http.StatusCreated, &conn)
	r.shared = conn.ID
	r.must(member, http.MethodPost, "/api/connections", map[string]any{"provider": "github", "token": githubBetaToken}, http.StatusCreated, &conn)
	r.private = conn.ID
	r.must(owner, http.MethodPost, "/api/openapi-providers", map[string]any{"name": "notes", "base_url": r.notes.URL, "description": notesDescription}, http.StatusCreated, nil)
	r.must(owner, http.MethodPost, "/api/connections", map[string]any{"provider": "notes", "token": notesKey, "shared": true}, http.StatusCreated, &conn)
	r.notesConn = conn.ID
	var remote struct {
		Connection struct {
			ID string `json:"id"`
		} `json:"connection"`
	}
	r.must(owner, http.MethodPost, "/api/remote-mcp", map[string]any{"name": "docs", "url": remoteURL, "auth": "bearer", "token": remoteMCPToken, "shared": true}, http.StatusCreated, &remote)
	r.docsConn = remote.Connection.ID
	r.saveWorkflow(owner, "matrix_me", "steps:\n  - {name: me, tool: github_get_me, connection: "+r.shared+"}\noutputs: {login: \"${{ steps.me.output.login }}\"}\n")
	// A workflow whose step fails: GitHub has no issue 999.
	if status, body := r.saveWorkflow(owner, "matrix_fails", "steps:\n  - {name: missing, tool: github_get_issue, connection: "+r.shared+
		", args: {owner: "+githubOwner+", repo: "+githubRepo+", issue_number: 999}}\n"); status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("save workflow matrix_fails: %d %s", status, body)
	}

	selection := []map[string]string{
		{"tool": "github_get_me", "connection_id": r.shared},
		{"tool": "notes_list_notes", "connection_id": r.notesConn},
		{"tool": "docs_search", "connection_id": r.docsConn},
		{"tool": "run_flow__matrix_me", "connection_id": ""},
		{"tool": "list_workflows", "connection_id": ""}, // the hub's tools are picked too (the run tools every agent has)
	}
	r.stepSaved = map[string]string{}
	r.saveSteps(owner, append(append([]toolKind{}, matrixKinds...), outsideKind))
	r.saveSteps(member, []toolKind{privateKind})
	// The agent selects every step workflow, the one whose step is outside its tools
	// too: its runs are still refused.
	for _, k := range append(append([]toolKind{}, matrixKinds...), outsideKind) {
		if r.stepSaved[k.step] == "" {
			selection = append(selection, map[string]string{"tool": "run_flow__" + k.step, "connection_id": ""})
		}
	}
	r.agentID, r.agentURL, r.keys[agentKey] = r.agent("matrix", selection, nil)
	r.principalIDs[agentKey] = "agent:" + r.agentID
	r.carefulID, r.carefulURL, r.keys[confirmKey] = r.agent("careful", selection, map[string]any{"confirm": "always", "approval": "person"})
	r.principalIDs[confirmKey] = "agent:" + r.carefulID
	var askingID string
	askingID, r.askingURL, r.keys[askKey] = r.agent("asking", selection, map[string]any{"confirm": "always", "approval": "relay"})
	r.principalIDs[askKey] = "agent:" + askingID
	r.person = signedInPerson(t, r.srv.AdminLink)
	r.keys[oauthGrant] = r.oauthToken()
	return r
}

// saveWorkflow saves the workflow name (steps in YAML) as principal.
func (r *matrixRig) saveWorkflow(principal, name, steps string) (int, []byte) {
	r.t.Helper()
	return r.api(principal).Do(r.t, http.MethodPost, "/api/workflows", map[string]any{"definition": "name: " + name + "\n" + steps, "overwrite": true})
}

// agent makes an agent of the owner with the tools and settings, and a key of it.
func (r *matrixRig) agent(name string, tools []map[string]string, settings map[string]any) (id, mcpURL, key string) {
	r.t.Helper()
	in := map[string]any{"name": name, "tools": tools}
	for k, v := range settings {
		in[k] = v
	}
	var a struct {
		ID     string `json:"id"`
		MCPURL string `json:"mcp_url"`
	}
	r.must(owner, http.MethodPost, "/api/agents", in, http.StatusCreated, &a)
	var k struct {
		Key string `json:"key"`
	}
	r.must(owner, http.MethodPost, "/api/agents/"+a.ID+"/keys", map[string]string{"name": name}, http.StatusCreated, &k)
	return a.ID, a.MCPURL, k.Key
}

// oauthToken is an access token for the tenant's MCP URL, from the authorization code
// grant of an MCP client the owner allows on the consent page.
func (r *matrixRig) oauthToken() string {
	t := r.t
	t.Helper()
	redirect := "http://127.0.0.1:1/callback"
	res, err := http.Post(r.srv.BaseURL+"/oauth/register", "application/json", strings.NewReader(
		`{"client_name":"Matrix client","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("register an MCP client: %d %s", res.StatusCode, body)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	mustJSON(t, body, &reg)
	verifier := "matrix-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"matrix"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {r.srv.MCPURL}, "scope": {"mcp"}}
	back := mustParse(t, r.person.Allow(r.srv.BaseURL+"/oauth/authorize?"+q.Encode()))
	code := back.Query().Get("code")
	if code == "" {
		t.Fatalf("the consent answer %s carries no code", back)
	}
	res, err = http.PostForm(r.srv.BaseURL+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"client_id": {reg.ClientID}, "code_verifier": {verifier}, "resource": {r.srv.MCPURL}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("exchange the code: %d %s", res.StatusCode, body)
	}
	return tok.AccessToken
}

// docsReadme is the resource the remote docs server holds, and docsBrief its prompt.
const (
	docsReadme = "docs://readme"
	docsBrief  = "brief"
)

// addDocsExtras gives the remote docs server a prompt, a resource, and a tool that
// answers with a resource_link to it.
func addDocsExtras(s *mcpserver.MCPServer) {
	s.AddPrompt(mcp.NewPrompt(docsBrief, mcp.WithPromptDescription("Brief the reader on the docs.")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("Brief", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Read the docs first."))}), nil
		})
	s.AddResource(mcp.NewResource(docsReadme, "README", mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: docsReadme, MIMEType: "text/plain", Text: "the docs' readme"}}, nil
		})
	s.AddTool(mcp.NewTool("readme", mcp.WithDescription("Link to the README.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewResourceLink(docsReadme, "README", "The docs' readme", "text/plain")}}, nil
		})
}
