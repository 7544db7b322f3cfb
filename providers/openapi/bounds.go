package openapi

import (
	"bytes"
	"context"
	"fmt"

	"github.com/switchboard-hub/switchboard"
)

// MaxDepth bounds how deeply a description's objects and arrays nest (the deepest of
// APIs.guru's 2,639 public descriptions nests 34 deep; GitHub's 21). The parser's cost
// grows with the depth of what it reads, so a deeper description is refused before it
// is parsed.
const MaxDepth = 128

// checkEvery is how many bytes a scan reads between two looks at its context.
const checkEvery = 64 << 10

// tooDeep is the error of a description that nests deeper than MaxDepth.
func tooDeep() error {
	return switchboard.Invalid("description", fmt.Sprintf("nests objects and arrays more than %d levels deep; no API description needs that many", MaxDepth))
}

// jsonDepth is how deeply JSON text nests objects and arrays, counting brackets outside
// strings; it stops at the first level past max (returning max+1), and when ctx ends
// (returning its error).
func jsonDepth(ctx context.Context, data []byte, max int) (int, error) {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i, c := range data {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > deepest {
				if deepest = depth; deepest > max {
					return deepest, nil
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest, nil
}

// yamlDepth reports whether YAML text nests at most max levels deep, as a cheap estimate
// made before the YAML is parsed: each indentation deeper than the one it is under, or
// each "- " of a sequence entry, is a level, and so is each flow collection ({ or [
// where a value starts, until it closes). Block scalars (| and >) and comments are
// skipped. It stops when ctx ends (returning its error).
func yamlDepth(ctx context.Context, data []byte, max int) (bool, error) {
	var indents []int // the block levels the current line is under, by indentation
	flow := 0         // open flow collections
	scalarOver := -1  // inside a block scalar: the indentation its lines are deeper than
	read := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if read += len(line) + 1; read >= checkEvery {
			read = 0
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		rest := bytes.TrimRight(line[indent:], " \t\r")
		if len(rest) == 0 || rest[0] == '#' {
			continue
		}
		if scalarOver >= 0 {
			if indent > scalarOver {
				continue
			}
			scalarOver = -1
		}
		if flow == 0 {
			for len(indents) > 0 && indents[len(indents)-1] >= indent {
				indents = indents[:len(indents)-1]
			}
			indents = append(indents, indent)
			for len(rest) > 0 && rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ') {
				indent += 2
				indents = append(indents, indent)
				rest = bytes.TrimLeft(rest[1:], " ")
			}
		}
		var ok bool
		if flow, ok = yamlFlow(rest, flow, len(indents), max); !ok {
			return false, nil
		}
		if len(indents)+flow > max {
			return false, nil
		}
		if flow == 0 && blockScalar(rest) {
			scalarOver = indent
		}
	}
	return true, nil
}

// yamlFlow follows a line's flow collections from the open ones before it: brackets
// outside quotes and comments, where a value starts (or anywhere inside a flow
// collection). It returns those open after the line, and false once block plus flow
// levels pass max.
func yamlFlow(line []byte, flow, block, max int) (int, bool) {
	valueStart := true
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '#' && (i == 0 || line[i-1] == ' '):
			return flow, true
		case (c == '"' || c == '\'') && (valueStart || flow > 0):
			quote = c
		case (c == '{' || c == '[') && (valueStart || flow > 0):
			if flow++; block+flow > max {
				return flow, false
			}
		case (c == '}' || c == ']') && flow > 0:
			flow--
		}
		switch {
		case c == ' ':
		case c == ':' || c == ',' || c == '-' || c == '?':
			valueStart = true
		default:
			valueStart = false
		}
	}
	return flow, true
}

// blockScalar reports whether a line ends in a block scalar's indicator (| or >, with
// its optional chomping and indentation indicators), so that the lines under it are
// text.
func blockScalar(line []byte) bool {
	if i := bytes.Index(line, []byte(" #")); i >= 0 {
		line = bytes.TrimRight(line[:i], " ")
	}
	end := len(line)
	for end > 0 && (line[end-1] == '+' || line[end-1] == '-' || line[end-1] >= '1' && line[end-1] <= '9') {
		end--
	}
	if end == 0 || line[end-1] != '|' && line[end-1] != '>' {
		return false
	}
	return end == 1 || line[end-2] == ' '
}
