package mockservice_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// Instances behind one port are independent services: what one stores,
// resets or switches, the other does not see; each identifies itself and
// answers its admin and metrics routes under its prefix; the root lists
// them and refuses everything else.
func TestInstancesAreIndependent(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.TimeScale = 0.1
	ms := mocktest.Start(t, mocktest.Options{Config: cfg, Instances: 2}).Instances
	ctx := context.Background()
	base := strings.TrimSuffix(ms[0].URL, "/i/0")
	if !strings.HasSuffix(ms[1].URL, "/i/1") || base+"/i/1" != ms[1].URL {
		t.Fatalf("URLs %s, %s", ms[0].URL, ms[1].URL)
	}
	post := func(url, body string) int {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(ms[0].URL+api.PathRecords, `{"id":"a-1","complete":true}`); code != http.StatusCreated {
		t.Fatalf("write to instance 0: %d", code)
	}
	for k, want := range []bool{true, false} {
		if _, ok, err := ms[k].Client.Record(ctx, "a-1"); err != nil || ok != want {
			t.Errorf("instance %d: record a-1 stored %v (%v), want %v", k, ok, err, want)
		}
		st, err := ms[k].Client.Scrape(ctx)
		if err != nil || st.StoredWrites != map[bool]int{true: 1, false: 0}[want] {
			t.Errorf("instance %d: metrics say %d stored (%v)", k, st.StoredWrites, err)
		}
	}
	if err := ms[1].Client.SetProfile(ctx, config.ProfileSlowWrite); err != nil {
		t.Fatal(err)
	}
	if err := ms[0].Client.ResetSeed(ctx, 7); err != nil {
		t.Fatal(err)
	}
	s0, _ := ms[0].Client.Scrape(ctx)
	s1, _ := ms[1].Client.Scrape(ctx)
	if s0.Profile != config.ProfileHealthy || s1.Profile != config.ProfileSlowWrite || s0.Seed != 7 || s1.Seed != cfg.Seed || s0.StoredWrites != 0 {
		t.Errorf("after a profile switch of 1 and a reset of 0: profiles %s/%s, seeds %d/%d, stored %d", s0.Profile, s1.Profile, s0.Seed, s1.Seed, s0.StoredWrites)
	}
	if id, err := ms[1].Client.Identify(ctx, api.PathEnrich); err != nil || id.TimeScale != 0.1 {
		t.Errorf("OPTIONS %s%s: %+v, %v", ms[1].URL, api.PathEnrich, id, err)
	}
	resp, err := http.Get(base + api.PathHealthz)
	if err != nil {
		t.Fatal(err)
	}
	var h mockservice.InstancesHealth
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || h.Instances != 2 || strings.Join(h.Paths, ",") != "/i/0,/i/1" || h.Service != api.ServiceName {
		t.Errorf("root /healthz: %d %+v (%v)", resp.StatusCode, h, err)
	}
	for _, path := range []string{api.PathEnrich, "/i/2" + api.PathEnrich, "/i/x" + api.PathRecords} {
		if code := post(base+path, `{"record_id":"r","step":1}`); code != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, code)
		}
	}
	resp, err = http.Post(base+api.PathEnrich, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "2 instances, under /i/0 … /i/1") {
		t.Errorf("the root's 404 does not say where the instances are: %s", b)
	}
}

// Several instances with one --store FILE keep a file each, FILE.k.
func TestInstancesKeepAStoreEach(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Store = filepath.Join(t.TempDir(), "records.wal")
	ms := mocktest.Start(t, mocktest.Options{Config: cfg, Instances: 2}).Instances
	resp, err := http.Post(ms[1].URL+api.PathRecords, "application/json", strings.NewReader(`{"id":"b-1","complete":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, want := range []string{"", `"b-1"`} {
		b, err := os.ReadFile(mockservice.InstanceStore(cfg.Store, k))
		if err != nil || (want == "") != (len(b) == 0) || !strings.Contains(string(b), want) {
			t.Errorf("instance %d's store: %q (%v)", k, b, err)
		}
	}
	if _, err := os.Stat(cfg.Store); !os.IsNotExist(err) {
		t.Errorf("%s itself was created: %v", cfg.Store, err)
	}
}

func TestInstancesOutOfRange(t *testing.T) {
	for _, n := range []int{-1, 0, config.MaxInstances + 1} {
		cfg := config.Default()
		cfg.Instances = n
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "instances: ") {
			t.Errorf("instances %d: %v", n, err)
		}
		if _, err := mockservice.NewInstances(config.Default(), n); err == nil {
			t.Errorf("NewInstances(%d) accepted", n)
		}
	}
}
