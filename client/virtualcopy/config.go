package virtualcopy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Virtual is the copy as the mock service's virtual copies take it,
// listening on listen; paths are the paths it answers (none: the probe's).
func (c Copy) Virtual(listen string, paths ...string) config.Virtual {
	if len(paths) == 0 {
		paths = []string{c.Path}
	}
	q := make([]latency.Quantile, len(c.Service))
	for i, p := range c.Service {
		q[i] = latency.Quantile{Q: p.Q, Value: time.Duration(p.Seconds * float64(time.Second))}
	}
	v := config.Virtual{Name: c.Name, Listen: listen, Method: c.Method, Paths: paths, OKStatus: c.OKStatus,
		Station:    config.Station{Workers: c.Workers, Queue: c.Queue, RejectStatus: c.RejectStatus},
		RetryAfter: c.RetryAfter, Service: latency.Spec{Kind: latency.KindEmpirical, Quantiles: q}, Slowdown: c.Slowdown}
	if c.Rate != nil {
		v.Rate = &config.TokenBucket{PerSecond: c.Rate.PerSecond, Burst: c.Rate.Burst, Status: c.Rate.Status, RetryAfter: c.Rate.RetryAfter}
	}
	return v
}

// PathsFor are the paths the copy answers for d, its pipeline's
// dependency of the copy's name: its probe's, and the path d calls (a
// templated one as every path below its fixed part). d must call the
// method the probe sent.
func (c Copy) PathsFor(d *pipeline.Dependency) ([]string, error) {
	if !strings.EqualFold(d.Method, c.Method) {
		return nil, fmt.Errorf("the probe sent %s, the pipeline's %s calls %s: probe it with --method %s", c.Method, c.Name, d.Method, d.Method)
	}
	path := d.Path
	if fixed, _, templated := strings.Cut(path, "{{"); templated {
		path = fixed[:strings.LastIndex(fixed, "/")+1] + "*"
	}
	if path == c.Path {
		return nil, nil
	}
	return []string{c.Path, path}, nil
}

// AnswerAs makes the copy answer a success with a status the pipeline's
// dependency d counts as one: the copy's own when d counts it, else d's
// first (said): a pipeline that takes only a 201 would count every
// answer of a copy answering 200 as an error.
func (c *Copy) AnswerAs(d *pipeline.Dependency) {
	if len(d.Success) == 0 || slices.Contains(d.Success, c.OKStatus) {
		return
	}
	c.say("success: %d, the first success of the pipeline's %s (%v), not the probe's %d, which the pipeline does not count as one", d.Success[0], d.Name, d.Success, c.OKStatus)
	c.OKStatus = d.Success[0]
}
