package providers

import (
	"errors"
	"net"
)

// DialFailure returns what the network said when a request in err's chain could not
// reach its upstream, naming the address dialled ("dial tcp 127.0.0.1:9: connect:
// connection refused"), or "" when err is no such failure. It is for the log and for
// the deployment's operator, who configures the providers' base URLs: the address may be
// one of the deployment's own network that a tenant's people have no business learning,
// so the answers to them keep to "could not be reached".
func DialFailure(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Error()
	}
	return ""
}
