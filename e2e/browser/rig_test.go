package browser

import "github.com/switchboard-hub/switchboard/e2e/internal/rig"

// The shared rig under the names this package's tests use.
type (
	server    = rig.Server
	apiClient = rig.APIClient
	recorder  = rig.Recorder
)

var (
	buildServer     = rig.BuildServer
	startServer     = rig.StartServer
	redactKey       = rig.RedactKey
	fakeGitHub      = rig.FakeGitHub
	fakeRemoteMCP   = rig.FakeRemoteMCP
	requireNode     = rig.RequireNode
	requireChromium = rig.RequireChromium
	browserDir      = rig.BrowserDir
)

const (
	chromiumPath       = rig.ChromiumPath
	remoteMCPToken     = rig.RemoteMCPToken
	githubToken        = rig.GitHubToken
	githubLogin        = rig.GitHubLogin
	githubBetaToken    = rig.GitHubBetaToken
	githubRenewedToken = rig.GitHubRenewedToken
	githubOwner        = rig.GitHubOwner
	githubRepo         = rig.GitHubRepo
	githubIssueNum     = rig.GitHubIssueNum
	githubIssueTitle   = rig.GitHubIssueTitle
)
