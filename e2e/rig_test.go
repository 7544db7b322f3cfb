package e2e

import "github.com/switchboard-hub/switchboard/e2e/internal/rig"

// The shared rig under the names this package's tests use.
type (
	server    = rig.Server
	apiClient = rig.APIClient
	received  = rig.Received
	recorder  = rig.Recorder
	person    = rig.Person
)

var (
	buildServer          = rig.BuildServer
	startServer          = rig.StartServer
	moduleRoot           = rig.ModuleRoot
	freeAddr             = rig.FreeAddr
	redactKey            = rig.RedactKey
	eachDatabase         = rig.EachDatabase
	freshPostgres        = rig.FreshPostgres
	fakeGitHub           = rig.FakeGitHub
	fakeSlack            = rig.FakeSlack
	fakeRemoteMCPWith    = rig.FakeRemoteMCPWith
	writeJSON            = rig.WriteJSON
	githubUser           = rig.GitHubUser
	githubIssue          = rig.GitHubIssue
	requireNode          = rig.RequireNode
	clientDir            = rig.ClientDir
	ensureClientPackages = rig.EnsureClientPackages
	requireChromium      = rig.RequireChromium
	browserDir           = rig.BrowserDir
	signedInPerson       = rig.SignedInPerson
	hidden               = rig.Hidden
	mustParse            = rig.MustParse
	mustJSON             = rig.MustJSON
)

const (
	envPostgresURL   = rig.EnvPostgresURL
	chromiumPath     = rig.ChromiumPath
	personPassword   = rig.PersonPassword
	remoteMCPToken   = rig.RemoteMCPToken
	githubToken      = rig.GitHubToken
	githubBadToken   = rig.GitHubBadToken
	githubLogin      = rig.GitHubLogin
	githubBetaToken  = rig.GitHubBetaToken
	githubBetaLogin  = rig.GitHubBetaLogin
	githubOwner      = rig.GitHubOwner
	githubRepo       = rig.GitHubRepo
	githubIssueNum   = rig.GitHubIssueNum
	githubIssueTitle = rig.GitHubIssueTitle
	githubCreatedAt  = rig.GitHubCreatedAt
	slackToken       = rig.SlackToken
	slackTeam        = rig.SlackTeam
	slackChannel     = rig.SlackChannel
	slackTS          = rig.SlackTS
	githubFakeScopes = rig.GitHubFakeScopes
)
