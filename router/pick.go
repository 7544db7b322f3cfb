package router

import (
	"fmt"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// PickConnection returns the id of the connection of refs that named names: every
// surface that takes a connection by name (an MCP tool's connection argument, a
// workflow step's connection) resolves it here. A connection id wins over any label,
// so no label, whoever chose it, takes a call meant for a connection named by its id;
// then a label (see ConnectionRef); then an account label that only one of them
// carries. An account label several of them share, and a name that fits none, are
// invalid errors naming field: the first lists their ids, the second the labels.
func PickConnection(refs []ConnectionRef, field, named string) (string, error) {
	for _, r := range refs {
		if r.ID == named {
			return r.ID, nil
		}
	}
	for _, r := range refs {
		if r.Label == named {
			return r.ID, nil
		}
	}
	var ids []string
	for _, r := range refs {
		if r.Account == named {
			ids = append(ids, r.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", switchboard.Invalid(field, fmt.Sprintf("%q is not one of your connections this tool runs on; use one of %s, or a connection id", named, QuotedLabels(refs)))
	case 1:
		return ids[0], nil
	}
	return "", switchboard.Invalid(field, fmt.Sprintf("%q is the label of several connections (%s); pass the id of the one to use", named, strings.Join(ids, ", ")))
}

// QuotedLabels lists the labels of refs, each quoted, separated by commas: for the
// messages that ask the caller to name one.
func QuotedLabels(refs []ConnectionRef) string {
	labels := make([]string, len(refs))
	for i, r := range refs {
		labels[i] = fmt.Sprintf("%q", r.Label)
	}
	return strings.Join(labels, ", ")
}
