package openapis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/openapi"
)

// parseBudget bounds the time reading a description may take (Stripe's, among the
// largest, takes a few seconds), so that no description holds a CPU for longer.
const parseBudget = 20 * time.Second

// parse reads a description into its document and the provider it makes with the
// options, within parseBudget and until ctx ends: a request's parse ends with the
// request, returning ctx's error; one over the budget is an invalid description.
func parse(ctx context.Context, data []byte, o openapi.Options) (*openapi3.T, providers.Spec, error) {
	return parseWithin(ctx, data, o, parseBudget)
}

// parseWithin is parse with a budget of its own.
func parseWithin(ctx context.Context, data []byte, o openapi.Options, budget time.Duration) (*openapi3.T, providers.Spec, error) {
	bounded, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	doc, err := openapi.Load(bounded, data)
	var spec providers.Spec
	if err == nil {
		spec, err = openapi.FromDocument(bounded, doc, o)
	}
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, providers.Spec{}, switchboard.Invalid("description", fmt.Sprintf("took longer than %s to read; a description this costly is refused", budget))
	}
	if err != nil {
		return nil, providers.Spec{}, err
	}
	return doc, spec, nil
}
