// Package providertest is the test kit of provider packages: a fake upstream that
// records what our code sent, a Call wired with the real client kit, the official API
// descriptions of the upstreams to prove requests and fake responses are shaped like
// the real API, and golden files for tool schemas.
//
// A typical provider test:
//
//	up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) { ... })
//	call := providertest.NewCall(t, &slack.Spec, up.URL, "xoxb-test")
//	out, err := op.Run(ctx, call, in)
//	id := providertest.SlackDescription(t).CheckRequest(t, up.Last(t))
//
// Start from [Upstream] (the fake, recording what was sent), [NewCall] and [Invoke],
// [APIDescription] with [CheckJSONRequest], and [GoldenSchemas].
package providertest
