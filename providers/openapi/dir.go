package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/switchboard-hub/switchboard/providers"
)

// FileOptions are a description's options in a configuration directory, kept beside it
// as NAME.options.json; the provider's name is the file's.
type FileOptions struct {
	Title      string   `json:"title"`
	BaseURL    string   `json:"base_url"`
	Auth       string   `json:"auth"`
	Operations []string `json:"operations"`
	Tags       []string `json:"tags"`
}

// LoadDir builds a provider from each description in an operator's directory:
// NAME.json, NAME.yaml or NAME.yml, with its options, when there are any, in
// NAME.options.json. NAME is the provider's name and its tools' prefix. The first
// description that cannot make a provider fails the whole load, naming the file.
func LoadDir(dir string) ([]providers.Spec, error) {
	files, err := DirFiles(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []providers.Spec
	for _, name := range names {
		spec, err := LoadFile(files[name])
		if err != nil {
			return nil, err
		}
		out = append(out, spec)
	}
	return out, nil
}

// DirFiles lists the descriptions in an operator's directory (see LoadDir) by the
// provider each makes: name → the file's path. It reads no description, so it is
// quick however large they are; two files of one name (NAME.json, NAME.yaml) are an
// error.
func DirFiles(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read OpenAPI directory: %w", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || strings.HasSuffix(e.Name(), ".options.json") || (ext != ".json" && ext != ".yaml" && ext != ".yml") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ext)
		if prev, dup := out[name]; dup {
			return nil, fmt.Errorf("OpenAPI descriptions %s and %s both name the provider %s", prev, filepath.Join(dir, e.Name()), name)
		}
		out[name] = filepath.Join(dir, e.Name())
	}
	return out, nil
}

// LoadFile builds the provider a description in an operator's directory makes (see
// LoadDir), its error naming the file.
func LoadFile(path string) (providers.Spec, error) {
	dir, file := filepath.Split(path)
	spec, err := loadFile(filepath.Clean(dir), file, strings.TrimSuffix(file, filepath.Ext(file)))
	if err != nil {
		return providers.Spec{}, fmt.Errorf("OpenAPI description %s: %w", path, err)
	}
	return spec, nil
}

func loadFile(dir, file, name string) (providers.Spec, error) {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return providers.Spec{}, err
	}
	var fo FileOptions
	raw, err := os.ReadFile(filepath.Join(dir, name+".options.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return providers.Spec{}, err
	default:
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&fo); err != nil {
			return providers.Spec{}, fmt.Errorf("%s.options.json: %w", name, err)
		}
	}
	return New(context.Background(), data, Options{Name: name, Title: fo.Title, BaseURL: fo.BaseURL, Auth: fo.Auth, Operations: fo.Operations, Tags: fo.Tags})
}
