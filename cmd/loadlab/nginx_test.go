package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startNginx runs Debian's nginx on a loopback port, answering 200 to
// everything, with its access log in dir ("METHOD PATH" per line). Under CI
// (CI set) a missing nginx fails the test; .ci/run installs nginx-light.
func startNginx(t *testing.T, dir string) (url, accessLog string) {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin, err = exec.LookPath("/usr/sbin/nginx") // not on every PATH
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("nginx not installed; .ci/run installs Debian's nginx-light")
		}
		t.Skip("nginx not installed (apt-get install nginx-light)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	accessLog = filepath.Join(dir, "access.log")
	conf := filepath.Join(dir, "nginx.conf")
	err = os.WriteFile(conf, []byte(fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events {}
http {
  log_format request_line '$request_method $uri';
  access_log %[2]s request_line;
  client_body_temp_path %[1]s;
  server {
    listen %[3]s;
    location / { return 200 "ok"; }
  }
}
`, dir, accessLog, addr)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf, "-p", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr, accessLog
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not listen on %s: %s", addr, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A real foreign service (Debian's nginx) loaded with loadlab load and
// loadlab run sees nothing but the load paths: no admin, log, metrics or
// health request, by its own access log.
func TestNginxSeesOnlyTheLoad(t *testing.T) {
	dir := t.TempDir()
	url, accessLog := startNginx(t, dir)
	var out, errb bytes.Buffer
	// At time scale 0.1 an arrival is behind (not sent) past 0.1 s real;
	// on a loaded machine one may be, so the log is held to what was sent.
	if code := run([]string{"load", "--target", url + "/orders", "--time-scale", "0.1", "--duration", "5", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("load: exit %d: %s", code, errb.String())
	}
	var load struct{ Scheduled, Requests, Behind, Dropped int }
	if err := json.Unmarshal(out.Bytes(), &load); err != nil {
		t.Fatalf("load --json: %v: %s", err, out.String())
	}
	if load.Scheduled != 10 || load.Requests < 1 || load.Requests+load.Behind+load.Dropped != 10 {
		t.Fatalf("load: %+v; want 10 scheduled, some sent", load)
	}
	if code := run([]string{"run", "--target", url, "--records", "5"}, &out, &errb); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	allowed := map[string]bool{"POST /orders": true, "OPTIONS /orders": true, "POST /enrich": true, "OPTIONS /enrich": true, "POST /records": true, "OPTIONS /records": true}
	var b []byte
	deadline := time.Now().Add(2 * time.Second) // nginx writes its log as requests end
	for time.Now().Before(deadline) {
		b, _ = os.ReadFile(accessLog)
		if strings.Count(string(b), "POST /records") == 5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		counts[line]++
		if !allowed[line] {
			t.Errorf("nginx was sent %q", line)
		}
	}
	if counts["POST /orders"] != load.Requests || counts["POST /enrich"] != 15 || counts["POST /records"] != 5 {
		t.Errorf("access log %v; want %d load requests (of 10 scheduled), 15 enrichments, 5 writes", counts, load.Requests)
	}
}
