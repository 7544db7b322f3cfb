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

// ConnectionIndex resolves a connection named by a call among a tool's connections as
// PickConnection does, in time that does not grow with how many there are: the names
// a call may use (ids, labels, account labels only one of them carries) are looked up
// in a map built once, when the tool is bound. A name it does not hold goes to
// PickConnection, which says what is wrong with it.
type ConnectionIndex struct {
	refs   []ConnectionRef
	byName map[string]string
}

// NewConnectionIndex indexes refs, which it keeps and never changes.
func NewConnectionIndex(refs []ConnectionRef) *ConnectionIndex {
	x := &ConnectionIndex{refs: refs, byName: make(map[string]string, 2*len(refs))}
	accounts := make(map[string]int, len(refs))
	for _, r := range refs {
		accounts[r.Account]++
	}
	for _, r := range refs {
		if accounts[r.Account] == 1 {
			x.byName[r.Account] = r.ID
		}
	}
	labels := make(map[string]bool, len(refs))
	for _, r := range refs {
		if !labels[r.Label] {
			labels[r.Label] = true // the first connection with a label takes it
			x.byName[r.Label] = r.ID
		}
	}
	for _, r := range refs {
		x.byName[r.ID] = r.ID // an id wins over any label
	}
	return x
}

// Refs are the connections indexed.
func (x *ConnectionIndex) Refs() []ConnectionRef { return x.refs }

// Pick returns the id of the connection named, or PickConnection's error.
func (x *ConnectionIndex) Pick(field, named string) (string, error) {
	if id, ok := x.byName[named]; ok {
		return id, nil
	}
	return PickConnection(x.refs, field, named)
}
