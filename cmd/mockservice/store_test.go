package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startMock starts the real command (this test binary as main) and returns
// its base URL and the store line it printed.
func startMock(t *testing.T, args ...string) (cmd *exec.Cmd, url, storeLine string) {
	t.Helper()
	cmd = exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOADLAB_RUN_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v (%s)", err, stderr.String())
	}
	storeLine, _ = r.ReadString('\n')
	go io.Copy(io.Discard, r)
	return cmd, strings.Fields(strings.TrimPrefix(line, "mockservice listening on "))[0], storeLine
}

// SIGKILL of the mock service while writes are in flight loses no write it
// acknowledged: after a restart on the same store, every write the clients
// got a 201 for is stored, and a repeat of one is a duplicate. Twenty
// times, each killed at another moment.
func TestSIGKILLLosesNoAcknowledgedWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	hc := &http.Client{Timeout: 5 * time.Second}
	total := 0
	for round := range 20 {
		store := filepath.Join(dir, fmt.Sprintf("store-%d", round))
		args := []string{"--listen", addr, "--store", store, "--time-scale", "0.01"}
		cmd, url, line := startMock(t, args...)
		if !strings.Contains(line, "store: "+store+", 0 accepted writes replayed") {
			t.Fatalf("start: %q", line)
		}
		var mu sync.Mutex
		var acked []string
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("r%d-g%d-%d", round, g, n)
					resp, err := hc.Post(url+"/records", "application/json", strings.NewReader(`{"id":"`+id+`","complete":true}`))
					if err != nil {
						return // the service is gone
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusCreated {
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
					}
				}
			}()
		}
		// Kill once writes are flowing (10 acknowledged), at a moment that
		// differs by round.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			if n >= 10 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d writes acknowledged in 10 s", round, n)
			}
		}
		time.Sleep(time.Duration(round*3) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		close(stop)
		wg.Wait()
		cmd2, url2, line2 := startMock(t, args...)
		var replayed int
		if _, err := fmt.Sscanf(strings.TrimPrefix(line2, "store: "+store+", "), "%d accepted writes replayed", &replayed); err != nil || replayed < len(acked) {
			t.Errorf("round %d: restart says %q; %d writes were acknowledged", round, line2, len(acked))
		}
		for _, id := range acked {
			resp, err := hc.Get(url2 + "/records/" + id)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("round %d: %s was acknowledged with 201 and is not stored after the restart (%d)", round, id, resp.StatusCode)
			}
		}
		resp, err := hc.Post(url2+"/records", "application/json", strings.NewReader(`{"id":"`+acked[0]+`","complete":true}`))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("round %d: a repeat of %s after the restart: %v %v, want 200 (a duplicate)", round, acked[0], resp.StatusCode, err)
		}
		resp.Body.Close()
		_ = cmd2.Process.Kill() // the next round starts on the same port
		_ = cmd2.Wait()
		total += len(acked)
	}
	t.Logf("20 kills, %d acknowledged writes, every one stored after its restart", total)
}
