package providertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SpecsDirEnv names the environment variable that points at the directory holding the
// official API descriptions (github/api.github.com.json.gz, slack/slack_web_openapi_v2.json).
const SpecsDirEnv = "SWITCHBOARD_SPECS_DIR"

// specFile finds a description file: under $SWITCHBOARD_SPECS_DIR if set, else under
// <repo root>/../shared/specs, where the repo root is the nearest directory above the
// working directory that holds go.mod. The error says where it looked.
func specFile(rel string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find API descriptions: working directory: %w", err)
	}
	return findSpec(os.Getenv(SpecsDirEnv), wd, rel)
}

// findSpec is specFile with the environment variable's value and the working directory
// passed in.
func findSpec(envDir, wd, rel string) (string, error) {
	dir, how, err := specsDir(envDir, wd)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("API description %s not found (looked %s): %w", p, how, err)
	}
	return p, nil
}

func specsDir(envDir, wd string) (dir, how string, err error) {
	if envDir != "" {
		return envDir, "in $" + SpecsDirEnv, nil
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(d), "shared", "specs"),
				fmt.Sprintf("in ../shared/specs beside the repo root %s; set $%s to look elsewhere", d, SpecsDirEnv), nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("find API descriptions: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", fmt.Errorf("find API descriptions: no go.mod in %s or any directory above it; set $%s", wd, SpecsDirEnv)
		}
		d = parent
	}
}
