package config

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Defaults of a virtual copy's settings left zero.
const (
	DefaultOKStatus   = http.StatusOK
	DefaultRateStatus = http.StatusTooManyRequests
	// MaxNameBytes bounds a virtual copy's name.
	MaxNameBytes = 64
)

// VirtualMethods are the methods a virtual copy may answer (OPTIONS is
// its identification, HEAD has no body to answer with).
var VirtualMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Virtual is one virtual copy of a dependency: a station of its own (N
// workers, a bounded FIFO queue, refusals beyond), optionally behind a
// token bucket, on an address of its own, answering one method on a few
// paths with the service times, refusals and rate a capacity probe of the
// real dependency measured. Zero fields take their defaults (WithDefaults).
type Virtual struct {
	// Name is the copy's station's name: the metric label service="…" and
	// its key in /admin/stats and /admin/config. Letters, digits, - and _.
	Name string `yaml:"name" json:"name"`
	// Listen is the copy's host:port (port 0: one the system chooses).
	Listen string `yaml:"listen" json:"listen"`
	// Method and Paths are the requests the copy answers: exact paths, or
	// a path ending in /* for every path below it (/lookup/* answers
	// /lookup/42); any other method or path is 404 and counted nowhere.
	Method string   `yaml:"method" json:"method"`
	Paths  []string `yaml:"paths" json:"paths"`
	// OKStatus answers a served request (2xx; DefaultOKStatus), body {}.
	OKStatus int `yaml:"ok_status,omitempty" json:"ok_status,omitempty"`
	// Station is the copy's workers, queue (UnboundedQueue: no limit) and
	// the status of its refusals (503 or 429; DefaultRejectStatus).
	Station Station `yaml:"station" json:"station"`
	// RetryAfter is the Retry-After of the station's refusals, in whole
	// seconds rounded up, as given (not scaled); 0: none.
	RetryAfter time.Duration `yaml:"retry_after,omitempty" json:"retry_after,omitempty"`
	// Service is the service-time distribution, in lab time (before the
	// time scale).
	Service latency.Spec `yaml:"service" json:"service"`
	// Slowdown multiplies a service's drawn time by Slowdown[n-1] when it
	// starts with n requests in service, itself included (the last entry
	// beyond the list; empty: 1). Each is > 0: a service may also speed up.
	Slowdown []float64 `yaml:"slowdown,omitempty" json:"slowdown,omitempty"`
	// Rate, when set, is a token bucket in front of the station.
	Rate *TokenBucket `yaml:"rate,omitempty" json:"rate,omitempty"`
}

// TokenBucket is a rate limit in front of a station: a request that finds
// no token is refused at once with Status (and Retry-After when set) and
// never reaches the station.
type TokenBucket struct {
	// PerSecond is the tokens added per lab second (per second at time
	// scale 1; per TimeScale seconds at another).
	PerSecond float64 `yaml:"per_second" json:"per_second"`
	// Burst is the bucket's size (≥ 1), and what it holds at the start.
	Burst int `yaml:"burst" json:"burst"`
	// Status is the refusal's status: 429 (DefaultRateStatus) or 503.
	Status int `yaml:"status,omitempty" json:"status,omitempty"`
	// RetryAfter is the refusal's Retry-After, in whole seconds rounded
	// up, as given (not scaled); 0: none.
	RetryAfter time.Duration `yaml:"retry_after,omitempty" json:"retry_after,omitempty"`
}

// Copies are the virtual copies one process serves, each on its own
// address, and what they share. Zero fields take their defaults
// (WithDefaults).
type Copies struct {
	// Seed seeds every copy's generator: copy c draws from
	// api.CopySeed(Seed, c.Name).
	Seed uint32 `yaml:"seed" json:"seed"`
	// TimeScale multiplies every service time and divides every rate (1
	// is real time; DefaultTimeScale).
	TimeScale float64 `yaml:"time_scale" json:"time_scale"`
	// AdminToken guards every copy's admin routes; required when a copy
	// listens on an address that is not loopback.
	AdminToken string `yaml:"admin_token" json:"-"`
	// ShutdownTimeout and ReadHeaderTimeout are the lab's service's
	// (DefaultShutdownTimeout, DefaultReadHeaderTimeout).
	ShutdownTimeout   time.Duration `yaml:"shutdown_timeout,omitempty" json:"shutdown_timeout,omitempty"`
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout,omitempty" json:"read_header_timeout,omitempty"`
	Copies            []Virtual     `yaml:"copies" json:"copies"`
}

// WithDefaults is v with its zero settings given their defaults: the OK
// status, the station's refusal status and the token bucket's.
func (v Virtual) WithDefaults() Virtual {
	if v.OKStatus == 0 {
		v.OKStatus = DefaultOKStatus
	}
	if v.Station.RejectStatus == 0 {
		v.Station.RejectStatus = DefaultRejectStatus
	}
	if v.Rate != nil {
		r := *v.Rate
		if r.Status == 0 {
			r.Status = DefaultRateStatus
		}
		v.Rate = &r
	}
	return v
}

// WithDefaults is c with its zero settings, and each copy's, given their
// defaults.
func (c Copies) WithDefaults() Copies {
	if c.TimeScale == 0 {
		c.TimeScale = DefaultTimeScale
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	c.Copies = slices.Clone(c.Copies)
	for i := range c.Copies {
		c.Copies[i] = c.Copies[i].WithDefaults()
	}
	return c
}

// Validate reports the first invalid setting of c with its defaults as a
// *field.Error, named by its YAML path ("copies[1].station.workers").
func (c Copies) Validate() error {
	c = c.WithDefaults()
	if err := api.CheckTimeScale(c.TimeScale); err != nil {
		return &field.Error{Field: "time_scale", Err: err}
	}
	if c.ShutdownTimeout < 0 {
		return fieldErrorf("shutdown_timeout", "%v must be > 0", c.ShutdownTimeout)
	}
	if c.ReadHeaderTimeout < 0 {
		return fieldErrorf("read_header_timeout", "%v must be > 0", c.ReadHeaderTimeout)
	}
	if len(c.Copies) == 0 {
		return fieldErrorf("copies", "at least one is needed")
	}
	names, listens := map[string]int{}, map[string]int{}
	for i, v := range c.Copies {
		at := fmt.Sprintf("copies[%d]", i)
		if err := v.Validate(); err != nil {
			return field.Within(at, err)
		}
		if j, ok := names[v.Name]; ok {
			return fieldErrorf(at+".name", "%q is copies[%d]'s name too", v.Name, j)
		}
		names[v.Name] = i
		if _, port, _ := net.SplitHostPort(v.Listen); port != "0" {
			if j, ok := listens[v.Listen]; ok {
				return fieldErrorf(at+".listen", "%q is copies[%d]'s address too", v.Listen, j)
			}
			listens[v.Listen] = i
		}
		if c.AdminToken == "" && !isLoopback(v.Listen) {
			return fieldErrorf("admin_token", "required when %s.listen %q is not loopback", at, v.Listen)
		}
	}
	return nil
}

// Validate reports the first invalid setting of v with its defaults as a
// *field.Error, named relative to the copy ("station.workers").
func (v Virtual) Validate() error {
	v = v.WithDefaults()
	if err := validName(v.Name); err != nil {
		return &field.Error{Field: "name", Err: err}
	}
	if _, port, err := net.SplitHostPort(v.Listen); err != nil {
		return fieldErrorf("listen", "%q is not host:port: %v", v.Listen, err)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fieldErrorf("listen", "%q: port %q is not a number from 0 to 65535", v.Listen, port)
	}
	if !slices.Contains(VirtualMethods, v.Method) {
		return fieldErrorf("method", "%q is not one of %s", v.Method, strings.Join(VirtualMethods, ", "))
	}
	if err := v.validPaths(); err != nil {
		return err
	}
	if v.OKStatus < 200 || v.OKStatus > 299 {
		return fieldErrorf("ok_status", "%d must be a 2xx status", v.OKStatus)
	}
	if err := v.Station.Validate(); err != nil {
		return within("station", err)
	}
	if v.RetryAfter < 0 {
		return fieldErrorf("retry_after", "%v must be ≥ 0", v.RetryAfter)
	}
	if _, err := v.Service.Build(); err != nil {
		return &field.Error{Field: "service", Err: err}
	}
	if err := ValidSlowdown(v.Slowdown); err != nil {
		return err
	}
	if v.Rate != nil {
		if err := v.Rate.Validate(); err != nil {
			return within("rate", err)
		}
	}
	return nil
}

// validName checks a copy's name: letters, digits, - and _.
func validName(name string) error {
	if name == "" || len(name) > MaxNameBytes {
		return fmt.Errorf("%q must be 1 to %d letters, digits, - or _", name, MaxNameBytes)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%q: %q is not a letter, digit, - or _", name, r)
		}
	}
	return nil
}

// validPaths checks the copy's paths: at least one, each absolute, with no
// query, unique, and none of the copy's own routes.
func (v Virtual) validPaths() error {
	if len(v.Paths) == 0 {
		return fieldErrorf("paths", "at least one is needed")
	}
	for i, p := range v.Paths {
		at := fmt.Sprintf("paths[%d]", i)
		switch {
		case !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?# \t\n") || strings.Contains(strings.TrimSuffix(p, "/*"), "*"):
			return fieldErrorf(at, "%q must be a path from / without query, fragment or spaces (a * only as its last segment)", p)
		case p == api.PathHealthz || p == api.PathMetrics || p == "/admin" || strings.HasPrefix(p, "/admin/"):
			return fieldErrorf(at, "%q is one of the copy's own routes (%s, %s, /admin/…)", p, api.PathHealthz, api.PathMetrics)
		case slices.Index(v.Paths, p) < i:
			return fieldErrorf(at, "%q is paths[%d] too", p, slices.Index(v.Paths, p))
		}
	}
	return nil
}

// ValidSlowdown reports the first factor of a slowdown that is not a
// finite number > 0, as a *field.Error ("slowdown[2]").
func ValidSlowdown(factors []float64) error {
	for i, f := range factors {
		if !(f > 0) || math.IsInf(f, 0) {
			return fieldErrorf(fmt.Sprintf("slowdown[%d]", i), "%v must be a number > 0", f)
		}
	}
	return nil
}

// Validate reports the first invalid setting of b as a *field.Error,
// named relative to the bucket ("burst"). A zero Status is 429.
func (b TokenBucket) Validate() error {
	switch {
	case !(b.PerSecond > 0) || math.IsInf(b.PerSecond, 0):
		return fieldErrorf("per_second", "%v must be a number > 0", b.PerSecond)
	case b.Burst < 1:
		return fieldErrorf("burst", "%d must be ≥ 1", b.Burst)
	case b.Status != 0 && !api.Rejected(b.Status):
		return fieldErrorf("status", "%d must be 429 or 503", b.Status)
	case b.RetryAfter < 0:
		return fieldErrorf("retry_after", "%v must be ≥ 0", b.RetryAfter)
	}
	return nil
}
