// Command bodyprobe measures what parallel large tools/call bodies do to a running
// hub's memory: it opens an MCP session, then sends rounds of parallel calls whose
// arguments are one large string, and prints the answers' statuses and the hub
// process's resident memory (VmRSS, and its peak VmHWM) after each round.
//
//	go run ./tools/bodyprobe -key sbk_… -pid PID -url http://127.0.0.1:8080/mcp/default
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
)

func main() {
	key := flag.String("key", "", "an API key of the tenant")
	pid := flag.Int("pid", 0, "the hub's process id, to read its memory")
	url := flag.String("url", "http://127.0.0.1:8080/mcp/default", "the tenant's MCP URL")
	parallel := flag.Int("parallel", 24, "calls sent at once")
	size := flag.Int("size", 3_900_000, "bytes of the argument of each call")
	rounds := flag.Int("rounds", 3, "rounds of parallel calls")
	flag.Parse()
	if *key == "" || *pid == 0 {
		log.Fatal("bodyprobe needs -key and -pid")
	}
	post := func(session, body string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, *url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+*key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		return http.DefaultClient.Do(req)
	}
	resp, err := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bodyprobe","version":"1"}}}`)
	if err != nil {
		log.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","arguments":{"text":"` + strings.Repeat("a", *size) + `"}}}`
	fmt.Println("before:", memory(*pid))
	for round := range *rounds {
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
		)
		for range *parallel {
			wg.Go(func() {
				resp, err := post(session, body)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			})
		}
		wg.Wait()
		fmt.Printf("round %d: statuses %v; %s\n", round, statuses, memory(*pid))
	}
}

// memory reads a process's resident and peak resident memory from /proc.
func memory(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "VmHWM") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}
