package hub

import (
	"context"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/runs"
)

// AsyncCallForTest exposes asyncCall to the package's tests.
func (t *Tools) AsyncCallForTest(ctx context.Context, p switchboard.Principal, in RunAsyncInput) (runs.Call, error) {
	return t.asyncCall(ctx, p, in)
}
