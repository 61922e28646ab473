package mockcmd

import "github.com/loadlab/loadlab/cmd/internal/cli"

// intro is mock's help: its purpose, examples and what a copy is.
const intro = "Serves virtual copies of your dependencies, each fitted from a probe of the original alone.\n\nExamples:\n" +
	"  loadlab probe --target http://127.0.0.1:9001/ledger --method POST --json > ledger.json\n" +
	"  loadlab mock --probe ledger=ledger.json --listen ledger=127.0.0.1:9101        # until Ctrl-C\n" +
	"  loadlab mock --probe ledger=ledger.json --probe geo=geo.json --check           # each copy beside its original\n\n" +
	"A copy is the mock service's station: workers (the probe's plateau × the mean latency at its knee, by\n" +
	"Little's law), a FIFO queue (the slots between the workers and the first refusal), refusal beyond with the\n" +
	"original's status and Retry-After, service times drawn from the latency quantiles the probe measured at its\n" +
	"lowest concurrency, growing with the requests in service where the probe's medians below the knee grew by\n" +
	"more than 10%. Refusals that were 429s with no waiting before them make a token bucket at the plateau\n" +
	"instead, in front of workers enough for every user the probe ran. A copy answers the probe's method and\n" +
	"path (the original's success status, body {}), and the mock service's /metrics, /admin/stats,\n" +
	"/admin/reset and /admin/config (live settings: workers, queue, service time, rate). Each prints where every\n" +
	"figure came from. What the probe could not tell is refused unless given: workers where it reached no\n" +
	"plateau (--workers), queue slots where it saw no refusal (--queue); a rate limit's burst is 1 unless given.\n\n" +
	"Exit codes: 0 served until Ctrl-C, or --check found every copy faithful; 1 --check found a copy that\n" +
	"differs; 2 bad input (a probe file, a figure the probe could not tell), nothing served.\n"

// groups shows mock's flags by what they are about.
var groups = []cli.Group{
	{Name: "Copies", Flags: []string{"probe", "listen", "pipeline", "workers", "queue", "burst"}},
	{Name: "Service", Flags: []string{"seed", "time-scale", "admin-token"}},
	{Name: "Check", Flags: []string{"check"}},
}
