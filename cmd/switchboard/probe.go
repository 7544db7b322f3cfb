package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// probePaths are the probes `switchboard probe` may ask: the ones the server answers.
var probePaths = map[string]bool{"/healthz": true, "/readyz": true}

// probeCommand asks the node listening at SWITCHBOARD_ADDR for one of its probes and
// exits 0 when it answers 200: the healthcheck of a container whose image has no
// shell or curl. An unspecified host (0.0.0.0, ::) is asked on loopback.
func probeCommand(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || !probePaths[args[0]] {
		fmt.Fprintln(stderr, "switchboard probe: give one probe path, /readyz or /healthz")
		return exitUsage
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard probe: SWITCHBOARD_ADDR %q: %v\n", cfg.Addr, err)
		return exitUsage
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + args[0]
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard probe: %v\n", err)
		return exitFailed
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard probe: GET %s: %v\n", url, err)
		return exitFailed
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "switchboard probe: GET %s answered %s: %s\n", url, res.Status, body)
		return exitFailed
	}
	fmt.Fprintf(stdout, "%s: %s\n", args[0], body)
	return exitOK
}
