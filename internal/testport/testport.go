// Package testport finds loopback ports for processes a test starts and tells the
// address before they listen (a server whose OAuth redirect must name its own URL,
// a child process given its port on the command line).
//
// A port asked of the kernel with ":0" and closed again is back in the ephemeral range,
// where the next outgoing connection or listener of any test running beside may take
// it before the child binds it. Ports here come from below the ephemeral range, which
// the kernel never hands out by itself, picked at random so that parallel test
// processes seldom try the same one, and each is checked free by binding it.
//
// Start from [Free] and [Addr].
package testport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// lowest is the first port tried: above the registered services most machines run.
const lowest = 10000

// Addr is "127.0.0.1:<port>" for a free port, failing t if none is found.
func Addr(t testing.TB) string {
	t.Helper()
	p, err := Free(1)
	if err != nil {
		t.Fatalf("find a free loopback port: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
}

// Free returns the first of n consecutive free loopback ports below the ephemeral range.
func Free(n int) (int, error) {
	highest := ephemeralStart() - n
	if highest <= lowest {
		return 0, errors.New("the ephemeral port range leaves no ports below it")
	}
	for range 200 {
		p := lowest + rand.IntN(highest-lowest)
		if allFree(p, n) {
			return p, nil
		}
	}
	return 0, errors.New("no free loopback ports below the ephemeral range after 200 tries")
}

func allFree(first, n int) bool {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for p := first; p < first+n; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		held = append(held, l)
	}
	return true
}

// ephemeralStart is the first port of the kernel's ephemeral range (Linux's
// ip_local_port_range; 32768, Linux's default and below the IANA range, elsewhere).
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if p, err := strconv.Atoi(f[0]); err == nil && p > 0 {
				return p
			}
		}
	}
	return 32768
}
