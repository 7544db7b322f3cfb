package workflows

import (
	"fmt"
	"regexp"
	"strings"
)

// secretPatterns recognise credentials pasted into a definition: a definition is
// readable by everyone of the tenant and stored unsealed, and connections hold the
// credentials tools need.
var secretPatterns = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`), "a GitHub token"},
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), "a GitHub token"},
	{regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`), "a Slack token"},
	{regexp.MustCompile(`\bxapp-[A-Za-z0-9-]{10,}`), "a Slack app token"},
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), "an AWS access key"},
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), "a private key"},
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), "an API secret key"},
	{regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}`), "a bearer token"},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), "a signed token (JWT)"},
	{regexp.MustCompile(`(?i)https?://[^/\s:@]+:[^/\s@]+@`), "a URL with a password"},
}

// secretNameRE matches argument names that hold credentials; a literal value under
// one is a secret in the definition.
var secretNameRE = regexp.MustCompile(`(?i)(password|passwd|secret|api_?key|access_?key|private_?key|auth_?token|access_?token|refresh_?token|^token$)`)

// looksSecret says what kind of secret a literal string looks like ("" for none).
func looksSecret(s string) string {
	for _, p := range secretPatterns {
		if p.re.MatchString(s) {
			return p.what
		}
	}
	return ""
}

// secrets refuses definitions that carry credentials in literal values.
func (c *compiler) secrets() {
	d := c.p.Def
	for _, s := range d.Steps {
		c.scanSecrets(s.Name, "args", s.Args)
		for _, f := range []struct{ name, v string }{{"connection", s.Connection}, {"if", s.If}, {"foreach", s.Foreach}} {
			if what := looksSecret(f.v); what != "" {
				c.add(s.Name, f.name, "holds what looks like %s; secrets never go in a workflow definition: connect the account and name its connection instead", what)
			}
		}
	}
	c.scanSecrets("", "outputs", d.Outputs)
	for i, tr := range d.Triggers {
		c.scanSecrets("", fmt.Sprintf("triggers[%d].params", i), tr.Params)
	}
	if len(d.Parameters) > 0 {
		if what := looksSecret(string(d.Parameters)); what != "" {
			c.add("", "parameters", "holds what looks like %s; secrets never go in a workflow definition", what)
		}
	}
	if what := looksSecret(d.Description); what != "" {
		c.add("", "description", "holds what looks like %s; secrets never go in a workflow definition", what)
	}
}

func (c *compiler) scanSecrets(step, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := path + "." + k
			if str, ok := x[k].(string); ok && str != "" && !exprRE.MatchString(str) && secretNameRE.MatchString(k) && !strings.Contains(strings.ToLower(k), "page") {
				c.add(step, p, "is a literal %s; secrets never go in a workflow definition: the connection carries the credentials, or pass it as a parameter", describeSecretName(k))
				continue
			}
			c.scanSecrets(step, p, x[k])
		}
	case []any:
		for i, e := range x {
			c.scanSecrets(step, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case string:
		if what := looksSecret(x); what != "" {
			c.add(step, path, "holds what looks like %s; secrets never go in a workflow definition: connect the account and name its connection instead", what)
		}
	}
}

func describeSecretName(k string) string { return "credential (" + k + ")" }
