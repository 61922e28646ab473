package virtualcopy

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/loadlab/loadlab/client/probe"
)

// Tolerance is how far a copy's plateau and service time may be from the
// original's, as a fraction of the original's, for the copy to be
// faithful; its knee and first refusal must be the same.
const Tolerance = 0.10

// Figure is one figure of a probe, the original's beside the copy's.
type Figure struct {
	Name, Unit     string
	Original, Copy *float64
	// Exact: the copy must give the same value, else within Tolerance.
	Exact bool
}

// Faithful says whether the copy's figure is the original's (both absent,
// or equal when Exact, or within Tolerance).
func (f Figure) Faithful() bool {
	switch {
	case f.Original == nil || f.Copy == nil:
		return f.Original == nil && f.Copy == nil
	case f.Exact:
		return *f.Original == *f.Copy
	}
	return math.Abs(*f.Copy-*f.Original) <= Tolerance*math.Abs(*f.Original)
}

// Compare is the figures of a probe of the original beside those of the
// same probe of its copy: knee, first refusal, plateau, and the service
// time's median and 99th percentile at the lowest concurrency.
func Compare(original, copied probe.Result) []Figure {
	low := func(r probe.Result, p func(probe.Step) *float64) *float64 {
		if s, ok := lowest(r.Steps); ok {
			if v := p(s); v != nil {
				ms := *v * 1000
				return &ms
			}
		}
		return nil
	}
	p50 := func(s probe.Step) *float64 { return s.P50Seconds }
	p99 := func(s probe.Step) *float64 { return s.P99Seconds }
	plateau := func(r probe.Result) *float64 { v := r.PlateauPerSecond; return &v }
	return []Figure{
		{Name: "knee", Unit: "concurrency", Original: intOf(original.Knee), Copy: intOf(copied.Knee), Exact: true},
		{Name: "first refusal", Unit: "concurrency", Original: intOf(original.RejectionsBeginAt), Copy: intOf(copied.RejectionsBeginAt), Exact: true},
		{Name: "plateau", Unit: "successes/s", Original: plateau(original), Copy: plateau(copied)},
		{Name: "service time p50", Unit: "ms", Original: low(original, p50), Copy: low(copied, p50)},
		{Name: "service time p99", Unit: "ms", Original: low(original, p99), Copy: low(copied, p99)},
	}
}

func intOf(n *int) *float64 {
	if n == nil {
		return nil
	}
	v := float64(*n)
	return &v
}

// WriteComparison prints the figures side by side with their differences
// and whether each is faithful; it returns how many are not.
func WriteComparison(w io.Writer, name string, figs []Figure) (unfaithful int, err error) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\toriginal\tcopy\tdifference\t\t\n", name)
	for _, f := range figs {
		verdict := "same"
		if !f.Faithful() {
			verdict, unfaithful = "DIFFERS", unfaithful+1
		} else if !f.Exact {
			verdict = fmt.Sprintf("within %.0f%%", 100*Tolerance)
		}
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\t\n", f.Name, f.Unit, show(f.Original), show(f.Copy), difference(f), verdict)
	}
	return unfaithful, tw.Flush()
}

func show(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%.4g", *v)
}

func difference(f Figure) string {
	if f.Original == nil || f.Copy == nil {
		return "-"
	}
	d := *f.Copy - *f.Original
	if f.Exact || *f.Original == 0 {
		return fmt.Sprintf("%+.4g", d)
	}
	return fmt.Sprintf("%+.4g (%+.1f%%)", d, 100*d / *f.Original)
}
