package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/yaml"

	"github.com/switchboard-hub/switchboard"
)

// MaxDescription bounds a description's size (Stripe's, among the largest public
// ones, is about 7 MB of JSON).
const MaxDescription = 32 << 20

// ErrNotDescription is in the chain of Load's error for data that is no API description
// at all (neither JSON nor YAML, or without "openapi" or "swagger"): its message quotes
// the data.
var ErrNotDescription = errors.New("not an API description")

// Load parses an API description, OpenAPI 3.0 or 3.1 (JSON or YAML), or Swagger 2.0,
// which is converted to OpenAPI 3. References are resolved within the document only:
// a description never makes the hub fetch another file or URL. A description that is
// none of these is an invalid "description" error saying why; so is one larger than
// MaxDescription or nesting deeper than MaxDepth, which is refused before it is parsed.
// Load stops when ctx ends, returning its error: callers bound it with a deadline, and
// a request's parse ends with the request.
func Load(ctx context.Context, data []byte) (*openapi3.T, error) {
	if len(data) > MaxDescription {
		return nil, switchboard.Invalid("description", fmt.Sprintf("is larger than %d MB", MaxDescription>>20))
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		// The estimate of YAML's nesting is rough: it only keeps the YAML parser from
		// work without end; the exact bound is checked on the JSON.
		ok, err := yamlDepth(ctx, data, 2*MaxDepth)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, tooDeep()
		}
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, &switchboard.Error{Code: switchboard.CodeInvalid, Field: "description", Message: "is neither JSON nor YAML: " + err.Error(), Err: ErrNotDescription}
		}
		data = j
	}
	depth, err := jsonDepth(ctx, data, MaxDepth)
	if err != nil {
		return nil, err
	}
	if depth > MaxDepth {
		return nil, tooDeep()
	}
	var head struct {
		Swagger any `json:"swagger"`
		OpenAPI any `json:"openapi"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &switchboard.Error{Code: switchboard.CodeInvalid, Field: "description", Message: "is not a JSON object: " + err.Error(), Err: ErrNotDescription}
	}
	swagger := fmt.Sprint(head.Swagger) == "2.0"
	if !swagger && head.OpenAPI == nil {
		return nil, &switchboard.Error{Code: switchboard.CodeInvalid, Field: "description", Message: `has neither "openapi" nor "swagger": it is not an API description`, Err: ErrNotDescription}
	}
	if v := fmt.Sprint(head.OpenAPI); !swagger && (len(v) < 2 || v[:2] != "3.") {
		return nil, switchboard.Invalid("description", fmt.Sprintf("is OpenAPI %s; 3.0, 3.1 and Swagger 2.0 are supported", v))
	}
	if depth > flattenFrom {
		if data, err = flatten(ctx, data, swagger); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	if !swagger {
		doc, err := loader.LoadFromData(data)
		if err != nil {
			return nil, switchboard.Invalid("description", "is not a valid OpenAPI document: "+err.Error())
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return doc, nil
	}
	var v2 openapi2.T
	if err := json.Unmarshal(data, &v2); err != nil {
		return nil, switchboard.Invalid("description", "is not a valid Swagger 2.0 document: "+err.Error())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	doc, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return nil, switchboard.Invalid("description", "could not be converted from Swagger 2.0: "+err.Error())
	}
	if err := loader.ResolveRefsIn(doc, nil); err != nil {
		return nil, switchboard.Invalid("description", "has a reference that does not resolve: "+err.Error())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	requiredBodies(doc)
	return doc, nil
}

// requiredBodies mends what the Swagger 2.0 conversion loses of a required body: a body
// parameter given by reference ("$ref": "#/parameters/Item") becomes a reference to a
// request body that the loader leaves unresolved, and formData parameters become a form
// body that is optional however many of its fields are required.
func requiredBodies(doc *openapi3.T) {
	if doc.Paths == nil {
		return
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			rb := op.RequestBody
			if rb == nil {
				continue
			}
			if rb.Value == nil && doc.Components != nil {
				if named, ok := doc.Components.RequestBodies[strings.TrimPrefix(rb.Ref, "#/components/requestBodies/")]; ok && named != nil && named.Value != nil {
					rb.Value = named.Value
				}
			}
			if rb.Value == nil || rb.Value.Required {
				continue
			}
			for name, mt := range rb.Value.Content {
				if isForm(name) && mt != nil && mt.Schema != nil && mt.Schema.Value != nil && len(mt.Schema.Value.Required) > 0 {
					rb.Value.Required = true
				}
			}
		}
	}
}

// isForm reports whether a media type is a form (urlencoded or multipart).
func isForm(mediaType string) bool {
	mt := strings.ToLower(mediaType)
	return strings.HasPrefix(mt, "application/x-www-form-urlencoded") || strings.HasPrefix(mt, "multipart/form-data")
}
