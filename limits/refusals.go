package limits

import "sync/atomic"

// The kinds of refusals the per-client throttles count (OnRefusal).
const (
	RefusedUnknownKey    = "unknown_key"     // KeyMisses: too many unknown keys from an address
	RefusedSignInAccount = "sign_in_account" // SignIns: the account is locked for a while
	RefusedSignInAddress = "sign_in_address" // SignIns: too many failures from an address
	RefusedSignInBusy    = "sign_in_busy"    // SignIns: too many sign-ins being checked
	RefusedBodyAddress   = "body_address"    // BodyBudget: over the address's share
	RefusedBodyBudget    = "body_budget"     // BodyBudget: over the budget
)

// refusalHook is the function a throttle tells its refusals to, set at any time.
type refusalHook struct {
	fn atomic.Pointer[func(kind string)]
}

func (h *refusalHook) set(fn func(kind string)) {
	if fn == nil {
		h.fn.Store(nil)
		return
	}
	h.fn.Store(&fn)
}

func (h *refusalHook) refused(kind string) {
	if fn := h.fn.Load(); fn != nil {
		(*fn)(kind)
	}
}
