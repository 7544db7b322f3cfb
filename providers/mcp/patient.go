package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// patientTransport is mcp-go's streamable HTTP client transport, with the time a
// request of the remote server (an elicitation, a sampling request) may take set by
// the call it came with. mcp-go ends its handling after 30 seconds and sends the answer
// with the context it ended, so an answer that came later never left; the hub relays
// such a request to its calling client, where a person may take longer. The request is
// handled for as long as the remote's call lasts (and the calling client waits), and an
// answer later than mcp-go waits is posted here.
type patientTransport struct {
	*transport.StreamableHTTP
	// post sends a JSON-RPC message to the server in the session.
	post func(ctx context.Context, body []byte) error
}

func (p *patientTransport) SetRequestHandler(handle transport.RequestHandler) {
	p.StreamableHTTP.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		// ctx ends with the remote's call, or after mcp-go's 30 seconds (which it
		// reports as its deadline): only the first ends the handling.
		hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, func() {
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				cancel()
			}
		})
		type answer struct {
			res *transport.JSONRPCResponse
			err error
		}
		done := make(chan answer, 1)
		go func() {
			res, err := handle(hctx, req)
			done <- answer{res, err}
		}()
		select {
		case a := <-done:
			stop()
			cancel()
			return a.res, a.err
		case <-ctx.Done():
		}
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			a := <-done // the call ended: hctx is canceled, and the handling ends
			return a.res, a.err
		}
		go func() {
			a := <-done
			cancel()
			res := a.res
			if a.err != nil {
				res = transport.NewJSONRPCErrorResponse(req.ID, mcpgo.INTERNAL_ERROR, a.err.Error(), nil)
			}
			if res == nil {
				return
			}
			body, err := json.Marshal(res)
			if err != nil {
				return
			}
			pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer pcancel()
			_ = p.post(pctx, body)
		}()
		return nil, nil // mcp-go sends nothing; the answer goes when it comes
	})
}
