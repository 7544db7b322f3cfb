package limits

import (
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// rateLimited is the error of a refused attempt: it says when to try again, in words
// and as RetryAfter (the Retry-After header).
func rateLimited(what string, wait time.Duration, more string) *switchboard.Error {
	msg := fmt.Sprintf("%s; try again in %s", what, inWords(wait))
	if more != "" {
		msg += ", " + more
	}
	return &switchboard.Error{Code: switchboard.CodeRateLimited, Message: msg, RetryAfter: wait}
}

// inWords says a wait the way a person reads it, rounded up: "1 second", "40
// seconds", "3 minutes".
func inWords(d time.Duration) string {
	secs := int((d + time.Second - 1) / time.Second)
	switch {
	case secs <= 1:
		return "1 second"
	case secs < 60:
		return fmt.Sprintf("%d seconds", secs)
	case secs <= 60:
		return "1 minute"
	default:
		return fmt.Sprintf("%d minutes", (secs+59)/60)
	}
}
