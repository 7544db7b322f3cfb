package main

import (
	"errors"
	"strings"
	"testing"
)

// FuzzLoadConfig: any environment (KEY=VALUE lines) is read without a panic into a
// configuration or an error naming the variable at fault, and the unknown-variable
// check takes it too.
func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{
		"SWITCHBOARD_ADDR=127.0.0.1:8080\nSWITCHBOARD_PUBLIC_URL=https://hub.example.com",
		"SWITCHBOARD_ADDR=:0\nSWITCHBOARD_DATABASE_URL=postgres://u:p@db/x",
		"SWITCHBOARD_ALLOWED_ORIGINS=https://a.test, http://b.test:8080,*",
		"SWITCHBOARD_REMOTE_MCP_ALLOW_CIDRS=10.0.0.0/8,fd00::/8\nSWITCHBOARD_REMOTE_MCP_ALLOW_PRIVATE=true",
		"SWITCHBOARD_KEYRING=vault\nSWITCHBOARD_VAULT_ADDR=http://127.0.0.1:8200\nSWITCHBOARD_VAULT_TOKEN=t\nSWITCHBOARD_VAULT_TRANSIT_KEY=k",
		"SWITCHBOARD_OAUTH_GITHUB_CLIENT_ID=id\nSWITCHBOARD_OAUTH_GITHUB_CLIENT_SECRET=s",
		"SWITCHBOARD_REFRESH_INTERVAL=-1h\nSWITCHBOARD_RUN_LEASE=0",
		"SWITCHBOARD_TRUSTED_PROXIES=10.0.0.1/33\nSWITCHBOARD_LOG_LEVEL=loud",
		"SWITCHBOARD_ADMIN_ADDR=127.0.0.1:8080\nSWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL=0",
		"SWITCHBOARD_BASE_URL_GITHUB=ftp://x\nSWITCHBOARD_ADRR=x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, env string) {
		environ := strings.Split(env, "\n")
		_ = unknownVars(environ)
		_, err := loadConfig(lookupEnv(environ))
		if err == nil {
			return
		}
		var ce *configError
		if !errors.As(err, &ce) || ce.Name == "" || ce.Reason == "" {
			t.Fatalf("loadConfig(%q) = %v (%T), want a configError naming the variable", env, err, err)
		}
	})
}
