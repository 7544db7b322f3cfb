package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wideVector is an amd64 assembly operand naming a YMM or ZMM register 0-15: the
// registers whose upper halves, left non-zero, make later SSE code pay.
var wideVector = regexp.MustCompile(`(^|[^\w·])[YZ](1[0-5]|[0-9])\b`)

// TestNoDependencyLeavesTheAVXUpperHalvesDirty reads the amd64 assembly of every
// package outside the standard library that the switchboard binary links, and fails
// on a function that uses YMM or ZMM registers 0-15 without VZEROUPPER (or
// VZEROALL). Such a function leaves the upper halves of the vector registers
// non-zero, and on Intel CPUs every later function mixing VEX and legacy SSE
// instructions then pays a transition penalty on each switch: Go's SHA-NI SHA-256 took
// 15 µs instead of 0.2 µs for a call's audit HMAC after github.com/segmentio/asm's
// AVX2 ASCII checks (no VZEROUPPER, still so in v1.2.1) had decoded its upstream
// answer, 10 µs of the hub's CPU per tool call (docs/performance.md, "What limits each
// figure").
func TestNoDependencyLeavesTheAVXUpperHalvesDirty(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if and .SFiles (not .Standard)}}{{$d := .Dir}}{{range .SFiles}}{{$d}}{{"\n"}}{{.}}{{"\n"}}{{end}}{{end}}`,
		".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	lines := strings.Fields(string(out))
	files := 0
	for i := 0; i+1 < len(lines); i += 2 {
		name := lines[i+1]
		if !strings.HasSuffix(name, "_amd64.s") {
			continue
		}
		files++
		for _, fn := range dirtyingFunctions(t, filepath.Join(lines[i], name)) {
			t.Errorf("%s: %s uses YMM/ZMM registers 0-15 and never runs VZEROUPPER", filepath.Join(lines[i], name), fn)
		}
	}
	if files == 0 {
		t.Fatal("go list found no amd64 assembly in the binary's dependencies: the check read nothing")
	}
}

// dirtyingFunctions returns the TEXT symbols of an assembly file that name a YMM or
// ZMM register 0-15 and contain no VZEROUPPER or VZEROALL.
func dirtyingFunctions(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var found []string
	var fn string
	var wide, zeroes bool
	end := func() {
		if fn != "" && wide && !zeroes {
			found = append(found, fn)
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "TEXT" {
			end()
			fn, wide, zeroes = strings.TrimSuffix(fields[1], ","), false, false
			continue
		}
		wide = wide || wideVector.MatchString(line)
		zeroes = zeroes || strings.Contains(line, "VZEROUPPER") || strings.Contains(line, "VZEROALL")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	end()
	return found
}

// TestDirtyingFunctions holds the reader to what it must find: a function using a YMM
// register without VZEROUPPER, and not one that clears them or uses XMM only.
func TestDirtyingFunctions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x_amd64.s")
	src := `#include "textflag.h"
// Y3 in a comment is not a use.
TEXT ·dirty(SB), NOSPLIT, $0-0
	VPCMPEQB Y1, Y1, Y1
	RET
TEXT ·clean(SB), NOSPLIT, $0-0
	VMOVDQU (AX), Y0
	VZEROUPPER
	RET
TEXT ·narrow(SB), NOSPLIT, $0-0
	MOVOU X0, X1 // Y2
	RET
TEXT ·wide512(SB), NOSPLIT, $0-0
	VPXORQ Z15, Z15, Z15
	RET
TEXT ·high(SB), NOSPLIT, $0-0
	VPXORQ Z16, Z16, Z16
	RET
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := dirtyingFunctions(t, path)
	if strings.Join(got, " ") != "·dirty(SB) ·wide512(SB)" {
		t.Fatalf("dirtyingFunctions = %q; want ·dirty(SB) and ·wide512(SB)", got)
	}
}
