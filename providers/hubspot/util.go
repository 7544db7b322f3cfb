package hubspot

import "strconv"

// itoa formats an int for messages and query parameters.
func itoa(n int) string { return strconv.Itoa(n) }
