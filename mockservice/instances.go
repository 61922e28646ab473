package mockservice

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// InstancePath is the path prefix of instance k of several: /i/k.
func InstancePath(k int) string { return fmt.Sprintf("/i/%d", k) }

// Instances are n independent mock services behind one port, for the
// shards of an experiment that share one mock process (a Kubernetes
// Deployment, one container): each has its own stations, queue, store,
// request log, seed, profile, live settings, metrics and admin routes.
// With one instance it is the service at the root, as without; with more,
// instance k answers under InstancePath(k) (/i/k/enrich, /i/k/metrics, …),
// and the root has only GET /healthz, listing them.
type Instances struct {
	Services []*Service
}

// InstancesHealth is the root's GET /healthz with several instances.
type InstancesHealth struct {
	Status    string   `json:"status"`
	Service   string   `json:"service"`
	Version   string   `json:"version"`
	TimeScale float64  `json:"time_scale"`
	Instances int      `json:"instances"`
	Paths     []string `json:"paths"`
}

// NewInstances builds n services of cfg. With a store and n > 1, instance
// k keeps its own file, cfg.Store + "." + k.
func NewInstances(cfg config.Config, n int) (*Instances, error) {
	if n < 1 || n > config.MaxInstances {
		return nil, fmt.Errorf("mockservice: instances: %d must be in [1, %d]", n, config.MaxInstances)
	}
	in := &Instances{}
	for k := range n {
		c := cfg
		if cfg.Store != "" && n > 1 {
			c.Store = InstanceStore(cfg.Store, k)
		}
		s, err := New(c)
		if err != nil {
			in.close()
			return nil, err
		}
		in.Services = append(in.Services, s)
	}
	return in, nil
}

// InstanceStore is instance k's store file when several share one
// --store FILE.
func InstanceStore(file string, k int) string { return fmt.Sprintf("%s.%d", file, k) }

// Paths are the instances' path prefixes ("" for a single one at the root).
func (in *Instances) Paths() []string {
	if len(in.Services) == 1 {
		return []string{""}
	}
	var out []string
	for k := range in.Services {
		out = append(out, InstancePath(k))
	}
	return out
}

// Handler routes each instance's requests to it.
func (in *Instances) Handler() http.Handler {
	if len(in.Services) == 1 {
		return in.Services[0].Handler()
	}
	mux := http.NewServeMux()
	paths := in.Paths()
	for k, s := range in.Services {
		mux.Handle(paths[k]+"/", http.StripPrefix(paths[k], s.Handler()))
	}
	first := in.Services[0]
	mux.HandleFunc("GET "+api.PathHealthz, func(w http.ResponseWriter, r *http.Request) {
		first.identify(w)
		writeJSON(w, http.StatusOK, InstancesHealth{Status: "ok", Service: api.ServiceName, Version: Version(),
			TimeScale: first.cfg.TimeScale, Instances: len(in.Services), Paths: paths})
	})
	where := fmt.Sprintf("%d instances, under %s … %s (e.g. %s%s)", len(paths), paths[0], paths[len(paths)-1], paths[0], api.PathEnrich)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s: this mock service serves %s", r.Method, r.URL.Path, where))
	})
	return mux
}

// Serve answers HTTP for every instance on ln until ctx is done, as
// Service.Serve does for one.
func (in *Instances) Serve(ctx context.Context, ln net.Listener) error {
	defer in.close()
	return serveHandler(ctx, ln, in.Handler(), in.Services[0].cfg)
}

func (in *Instances) close() {
	for _, s := range in.Services {
		_ = s.writes.close()
	}
}

// StartInstances serves n instances of cfg on cfg.Listen in the background,
// as Start serves one. It returns their base URLs
// (http://host:port/i/k; with one instance, the root).
func StartInstances(cfg config.Config, n int) (in *Instances, baseURLs []string, stop func() error, err error) {
	if in, err = NewInstances(cfg, n); err != nil {
		return nil, nil, nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		in.close()
		return nil, nil, nil, fmt.Errorf("mockservice: listen: %w", err)
	}
	baseURLs, stop = in.serveBackground(ln)
	return in, baseURLs, stop, nil
}

// StartOn is StartInstances on a listener of the caller's (cfg.Listen is
// not used): an in-memory one, say. The service owns ln from then on.
func StartOn(cfg config.Config, n int, ln net.Listener) (in *Instances, baseURLs []string, stop func() error, err error) {
	if in, err = NewInstances(cfg, n); err != nil {
		ln.Close()
		return nil, nil, nil, err
	}
	baseURLs, stop = in.serveBackground(ln)
	return in, baseURLs, stop, nil
}

// serveBackground serves in on ln until stop, which returns Serve's result
// and may be called more than once.
func (in *Instances) serveBackground(ln net.Listener) (baseURLs []string, stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Serve(ctx, ln) }()
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() { cancel(); result = <-done })
		return result
	}
	for _, p := range in.Paths() {
		baseURLs = append(baseURLs, "http://"+ln.Addr().String()+p)
	}
	return baseURLs, stop
}
