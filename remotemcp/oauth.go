package remotemcp

import (
	"context"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
)

// errNoOAuth says the authorization code flow is not available in this build.
func errNoOAuth() error {
	return switchboard.Invalid("auth", "oauth (authorization code) is not available yet; use bearer or client_credentials")
}

func (s *Service) startOAuth(context.Context, switchboard.Principal, RegisterInput) (connections.Authorization, error) {
	return connections.Authorization{}, errNoOAuth()
}

func (s *Service) finishOAuth(context.Context, connections.ExternalCallback) (connections.Connection, connections.Credentials, error) {
	return connections.Connection{}, connections.Credentials{}, errNoOAuth()
}

func (s *Service) refreshOAuth(context.Context, connections.Connection, connections.Credentials) (connections.Credentials, error) {
	return connections.Credentials{}, errNoOAuth()
}
