package switchboard_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
)

// TestCodeHTTPStatus checks the status every code answers with, so a code added to
// Codes without a status of its own (it would fall to 500) shows here.
func TestCodeHTTPStatus(t *testing.T) {
	t.Parallel()
	got := map[switchboard.Code]int{}
	for _, c := range switchboard.Codes() {
		got[c] = c.HTTPStatus()
	}
	want := map[switchboard.Code]int{
		switchboard.CodeInvalid: http.StatusBadRequest, switchboard.CodeUnauthorized: http.StatusUnauthorized,
		switchboard.CodeForbidden: http.StatusForbidden, switchboard.CodeNotFound: http.StatusNotFound,
		switchboard.CodeConflict: http.StatusConflict, switchboard.CodeRateLimited: http.StatusTooManyRequests,
		switchboard.CodeReconnect: http.StatusFailedDependency, switchboard.CodeUpstream: http.StatusBadGateway,
		switchboard.CodeUnavailable: http.StatusServiceUnavailable, switchboard.CodeInternal: http.StatusInternalServerError,
		switchboard.CodeMethodNotAllowed: http.StatusMethodNotAllowed, switchboard.CodeConfirmationRequired: http.StatusConflict,
		switchboard.CodeCanceled: 499, switchboard.CodeOutcomeUnknown: http.StatusGatewayTimeout,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses by code (-want +got):\n%s", diff)
	}
}
