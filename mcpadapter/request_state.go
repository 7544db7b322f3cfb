package mcpadapter

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// requestStateLifetime is how long the answer to a confirmation the hub asked for may
// take: as long as an input_required run waits for its own.
const requestStateLifetime = 15 * time.Minute

// requestStateVersion starts every requestState the hub issues, and is signed with it.
const requestStateVersion = "v1"

// requestStates issues and checks the requestState the hub gives with a confirmation
// it asks for in a tools/call result (input_required), which the client echoes when it
// calls again with the person's answer: an expiry and an HMAC-SHA-256, under a key
// every node of the hub shares, of that expiry, the call (how it was made, the tool,
// the connection and its arguments) and who made it (tenant, principal, key, agent
// URL). An answer counts only with the requestState of the same call by the same
// caller, so a client cannot answer a question it was never asked.
type requestStates struct {
	key []byte
	now func() time.Time
}

// stateCall is what a requestState is bound to: the call and who makes it.
type stateCall struct {
	p       switchboard.Principal
	agentID string // the agent URL the call came to, if any
	origin  runs.Origin
	rreq    router.Request
}

// issue returns the requestState of a confirmation asked now for the call.
func (s requestStates) issue(c stateCall) string {
	exp := strconv.FormatInt(s.now().Add(requestStateLifetime).Unix(), 10)
	return requestStateVersion + "." + exp + "." + base64.RawURLEncoding.EncodeToString(s.sign(exp, c))
}

// check returns an error, naming what is wrong, unless state is a requestState the hub
// issued for this very call, not yet expired.
func (s requestStates) check(state string, c stateCall) error {
	version, rest, _ := strings.Cut(state, ".")
	exp, sig, _ := strings.Cut(rest, ".")
	unix, err := strconv.ParseInt(exp, 10, 64)
	mac, errMAC := base64.RawURLEncoding.DecodeString(sig)
	if version != requestStateVersion || err != nil || errMAC != nil {
		return switchboard.Invalid("requestState", "is not one Switchboard issued; call again without inputResponses to be asked for the confirmation")
	}
	if !hmac.Equal(mac, s.sign(exp, c)) {
		return switchboard.Invalid("requestState", "was not issued for this call (another tool, other arguments or another caller) or was altered; call again without inputResponses to be asked for the confirmation")
	}
	if !s.now().Before(time.Unix(unix, 0)) {
		return switchboard.Invalid("requestState", fmt.Sprintf("expired: the confirmation was asked more than %d minutes ago; call again without inputResponses to be asked again", int(requestStateLifetime.Minutes())))
	}
	return nil
}

// sign is the HMAC of a requestState: its version and expiry, and the call. Each field
// is written with its length first, so no two calls sign the same bytes.
func (s requestStates) sign(exp string, c stateCall) []byte {
	mac := hmac.New(sha256.New, s.key)
	args := argsDigest(c.rreq.Args)
	for _, field := range []string{
		requestStateVersion, exp,
		string(c.p.TenantID), c.p.ID(), c.p.UserID, c.p.KeyID, c.agentID,
		string(c.origin), c.rreq.Tool, c.rreq.ConnectionID, string(args[:]),
	} {
		var n [binary.MaxVarintLen64]byte
		mac.Write(n[:binary.PutUvarint(n[:], uint64(len(field)))])
		mac.Write([]byte(field))
	}
	return mac.Sum(nil)
}

// argsDigest is the SHA-256 of a call's arguments in one spelling (keys sorted, no
// spaces, numbers as written), so a client that sends the same arguments again in
// another order still answers its own call.
func argsDigest(args json.RawMessage) [sha256.Size]byte {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err == nil {
		if canonical, err := json.Marshal(v); err == nil {
			return sha256.Sum256(canonical)
		}
	}
	return sha256.Sum256(args)
}

// errNoStateKey is why the runs extension cannot start without a key for its requestStates.
var errNoStateKey = errors.New("mcpadapter: RunsOptions.StateKey is required (derive it from the keyring, so every node has the same)")
