package providers

import "encoding/json"

// FastValid reports whether the validator has a fast path for its schema, and
// whether that path finds raw valid.
func (v *Validator) FastValid(raw []byte) (has, valid bool) {
	if v.fast == nil {
		return false, false
	}
	return true, v.fast.valid(raw)
}

// FullValidate is Validate by the JSON Schema validator alone.
func (v *Validator) FullValidate(raw json.RawMessage) error { return v.full(raw) }

// ArgsValidator is the validator of the tool's arguments.
func (t *Tool) ArgsValidator() *Validator { return t.validator }
