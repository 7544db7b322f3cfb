package mcp

import (
	"errors"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/egress"
)

// refusal turns an egress.RefusedError anywhere in err into an invalid "url" error that
// says which address was refused and how an operator allows it.
func refusal(err error) error {
	var re *egress.RefusedError
	if errors.As(err, &re) {
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: "url", Message: re.Error(), Err: err}
	}
	return nil
}
