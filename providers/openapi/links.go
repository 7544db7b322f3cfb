package openapi

import "net/url"

// LinkURL is raw when it is an absolute http or https URL, else "": the URLs a
// description supplies (its documentation's, its OAuth endpoints) are kept, linked or
// followed only then, never a javascript:, data: or file: URL.
func LinkURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return raw
}
