package providertest

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
)

// specs holds the official API descriptions the request checks read, gzip-compressed,
// each beside its licence: github/api.github.com.json.gz (from @octokit/openapi
// 23.0.2, MIT) and slack/slack_web_openapi_v2.json.gz (slackapi/slack-api-specs, MIT).
// They are embedded so a plain clone's tests need no file outside the repository and
// work from any working directory.
//
//go:embed testdata/specs
var specs embed.FS

// readSpec returns the uncompressed bytes of the description at rel, a path under
// testdata/specs such as "github/api.github.com.json.gz".
func readSpec(rel string) ([]byte, error) {
	gz, err := specs.ReadFile("testdata/specs/" + rel)
	if err != nil {
		return nil, fmt.Errorf("read API description %s: %w", rel, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("gunzip API description %s: %w", rel, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("gunzip API description %s: %w", rel, err)
	}
	return raw, nil
}
