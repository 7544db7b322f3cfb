package api

import (
	"slices"
	"strings"
)

// providerScopes lists the scopes a provider's tools need, each once, sorted.
func (s *server) providerScopes(provider string) []string {
	out := []string{}
	for _, t := range s.Registry.Tools(provider) {
		for _, sc := range t.Info.Scopes {
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	slices.Sort(out)
	return out
}

// scopeCovered reports whether the granted scopes include need: the scope itself, a
// parent it is a sub-scope of (GitHub's repo covers repo:status, user covers
// user:email), or, for a read:X scope, write:X or admin:X.
func scopeCovered(granted []string, need string) bool {
	if slices.Contains(granted, need) {
		return true
	}
	if parent, _, ok := strings.Cut(need, ":"); ok && slices.Contains(granted, parent) {
		return true
	}
	if rest, ok := strings.CutPrefix(need, "read:"); ok {
		return slices.Contains(granted, "write:"+rest) || slices.Contains(granted, "admin:"+rest)
	}
	return false
}

// scopeGaps compares what a connection was granted with what its provider's tools
// need: the scopes missing, and the tools that will fail for want of them. A
// connection that reports no scopes (a fine-grained GitHub token, an API key without
// scopes) is not compared: nothing is known to be missing.
func (s *server) scopeGaps(provider string, granted []string) (missing, failing []string) {
	if len(granted) == 0 {
		return nil, nil
	}
	for _, t := range s.Registry.Tools(provider) {
		lacks := false
		for _, sc := range t.Info.Scopes {
			if !scopeCovered(granted, sc) {
				lacks = true
				if !slices.Contains(missing, sc) {
					missing = append(missing, sc)
				}
			}
		}
		if lacks {
			failing = append(failing, t.Name)
		}
	}
	slices.Sort(missing)
	return missing, failing
}
