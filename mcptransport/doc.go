// Package mcptransport is the hub's side of MCP's Streamable HTTP transport, apart from
// the tools it serves (mcpadapter): reading posted JSON-RPC bodies, MCP session ids and
// sessions as database rows, the SSE streams of calls and their event store for
// resumption, the renumbering of server-to-client request ids, and the relay that
// carries session messages between the nodes of one deployment.
//
// Start from [Incoming] (a posted request read), [SessionStore] and [SessionCache]
// (sessions as rows), [CallStream] and [EventStore] (a call's SSE stream and its
// resumption), [ServeOutliving] (a call that ends its exchange to have its client
// poll, and runs on), and [Relay] (messages between nodes).
package mcptransport
