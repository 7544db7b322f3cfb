package testport

import (
	"net"
	"strconv"
	"testing"
)

// TestFreeIsBelowTheEphemeralRange checks the ports handed out are bindable and never
// ones the kernel gives to ":0" listeners or outgoing connections.
func TestFreeIsBelowTheEphemeralRange(t *testing.T) {
	eph := ephemeralStart()
	for range 50 {
		p, err := Free(2)
		if err != nil {
			t.Fatal(err)
		}
		if p < lowest || p+1 >= eph {
			t.Fatalf("ports %d and %d: want both in [%d, %d)", p, p+1, lowest, eph)
		}
		for _, q := range []int{p, p + 1} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
			if err != nil {
				t.Fatalf("port %d was given as free: %v", q, err)
			}
			_ = l.Close()
		}
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if p := held.Addr().(*net.TCPAddr).Port; p < eph {
		t.Fatalf("the kernel gave :0 port %d, below the ephemeral start %d read here", p, eph)
	}
}

// TestFreeSkipsPortsInUse holds a port and checks that asking for a run of ports
// starting there is never answered with it.
func TestFreeSkipsPortsInUse(t *testing.T) {
	p, err := Free(1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if allFree(p, 1) {
		t.Fatalf("port %d is held, yet allFree says it is free", p)
	}
}
