package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
)

// MaxBodyBytes bounds a request body.
const MaxBodyBytes = 1 << 20

// decode reads the request body as exactly one JSON object into v, refusing unknown
// fields, trailing data and bodies over MaxBodyBytes; each refusal names the field.
func decode(c *gin.Context, v any) error { return decodeUpTo(c, v, MaxBodyBytes) }

// decodeUpTo is decode with its own bound on the body, for a route that takes more
// than MaxBodyBytes (an API's description).
func decodeUpTo(c *gin.Context, v any, limit int64) error {
	body := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return decodeError(err)
		}
		return switchboard.Invalid("body", "must hold one JSON object and nothing after it")
	}
	return nil
}

func decodeError(err error) error {
	var (
		syntax   *json.SyntaxError
		typeErr  *json.UnmarshalTypeError
		tooLarge *http.MaxBytesError
	)
	switch {
	case errors.Is(err, io.EOF):
		return switchboard.Invalid("body", "is empty; send a JSON object")
	case errors.As(err, &tooLarge):
		return switchboard.Invalid("body", fmt.Sprintf("is larger than %d bytes", tooLarge.Limit))
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return switchboard.Invalid("body", "is not valid JSON")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return switchboard.Invalid("body", "must be a JSON object")
		}
		return switchboard.Invalid(typeErr.Field, "must be a JSON "+jsonKind(typeErr.Type.Kind().String()))
	}
	// encoding/json reports an unknown field only in its message: json: unknown field "x".
	if quoted, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, uerr := strconv.Unquote(quoted)
		if uerr != nil {
			name = strings.Trim(quoted, `"`)
		}
		switch {
		case name == "":
			return switchboard.Invalid("body", `has a field with an empty name ("")`)
		case len(name) > 100:
			return switchboard.Invalid("body", fmt.Sprintf("has an unknown field %.100q…", name))
		}
		return switchboard.Invalid(name, "is not a known field")
	}
	return switchboard.Invalid("body", "could not be read as JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	case "ptr":
		return "value of the documented type"
	default:
		return "number"
	}
}

// required checks that the string fields named are set, naming the first that is not.
func required(fields ...[2]string) error {
	for _, f := range fields {
		if strings.TrimSpace(f[1]) == "" {
			return switchboard.Invalid(f[0], "is required")
		}
	}
	return nil
}
