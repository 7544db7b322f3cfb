package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// publicURLFile is where serve records, in the data directory, the public URL it
// serves at, so that the commands which print links (tenant create, user
// password-link) print the server's URL rather than one they would have to guess.
const publicURLFile = "public-url"

// storePublicURL records the URL serve reaches people at.
func storePublicURL(cfg config, publicURL string) error {
	p := filepath.Join(cfg.DataDir, publicURLFile)
	if err := os.WriteFile(p, []byte(publicURL+"\n"), 0o600); err != nil {
		return fmt.Errorf("record the public URL in %s: %w", p, err)
	}
	return nil
}

// linkBase is the URL the links a command prints start with: SWITCHBOARD_PUBLIC_URL if
// set, else the one the server recorded at its last start, else the one
// SWITCHBOARD_ADDR implies. In that last case, a note on stderr says the URL was
// assumed and how to give the right one.
func linkBase(cfg config, stderr io.Writer) (string, error) {
	if cfg.PublicURL != "" {
		return strings.TrimRight(cfg.PublicURL, "/"), nil
	}
	p := filepath.Join(cfg.DataDir, publicURLFile)
	b, err := os.ReadFile(p)
	switch {
	case err == nil:
		if u, err := checkHTTPURL(strings.TrimSpace(string(b))); err == nil {
			return u, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the server's public URL: %w", err)
	}
	u := publicURLFor(cfg.Addr)
	fmt.Fprintf(stderr, "switchboard: no server has recorded its URL in %s yet, so the links below assume %s (from SWITCHBOARD_ADDR); set SWITCHBOARD_PUBLIC_URL to the server's URL if it differs\n", p, u)
	return u, nil
}
