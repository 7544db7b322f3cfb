package clients

import "github.com/switchboard-hub/switchboard/e2e/internal/rig"

// The shared rig under the names this package's tests use.
type (
	server    = rig.Server
	apiClient = rig.APIClient
	person    = rig.Person
)

var (
	buildServer           = rig.BuildServer
	startServer           = rig.StartServer
	moduleRoot            = rig.ModuleRoot
	freeAddr              = rig.FreeAddr
	redactKey             = rig.RedactKey
	withoutSwitchboardEnv = rig.WithoutSwitchboardEnv
	fakeGitHub            = rig.FakeGitHub
	fakeSlack             = rig.FakeSlack
	writeJSON             = rig.WriteJSON
	githubAccounts        = rig.GitHubAccounts
	githubUser            = rig.GitHubUser
	requireNode           = rig.RequireNode
	clientDir             = rig.ClientDir
	ensureClientPackages  = rig.EnsureClientPackages
	signedInPerson        = rig.SignedInPerson
	mustParse             = rig.MustParse
	mustJSON              = rig.MustJSON
)

const (
	githubToken      = rig.GitHubToken
	githubLogin      = rig.GitHubLogin
	githubBetaToken  = rig.GitHubBetaToken
	githubOwner      = rig.GitHubOwner
	githubRepo       = rig.GitHubRepo
	githubFakeScopes = rig.GitHubFakeScopes
	slackToken       = rig.SlackToken
	slackTeam        = rig.SlackTeam
)
