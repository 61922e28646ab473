package strategy

import (
	"errors"
	"fmt"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/mockservice/api"
)

// AdaptiveAlg names an adaptive limit's algorithm, as strategy files and
// --adaptive specs spell it.
type AdaptiveAlg string

// The adaptive algorithms C5 runs.
const (
	AlgAIMD  AdaptiveAlg = "aimd"
	AlgVegas AdaptiveAlg = "vegas"
)

// C5's adaptive limits start at C4's budgets and stay within what the
// lab's dependencies can take: the system of record holds 6 workers and 6
// queue slots (12 calls at once; beyond, 503), the enrichment API 256
// workers. Netflix's defaults (AIMD's floor 20, ceiling 200) are above the
// system of record's whole capacity: these come from the dependencies.
const (
	C5RecordsCeiling    = 12
	C5EnrichmentCeiling = 64
)

// Vegas settings of the lab's C5-vegas. Writes have a fixed service time,
// so a queue of one call at the system of record is one worker's worth of
// waiting. The rule's ⌈limit × (1 − noLoad ÷ rtt)⌉ reads any RTT above the
// lowest as a queue of at least 1, so writes grow while the estimate is 1
// (Alpha 2, Threshold 0), hold at 2 and shrink above (Beta 2): about one
// write waiting, the limit one above the workers; windows of 10 writes
// (Netflix WindowedLimit's minimum). Enrichment calls have a spread of service
// times (lognormal), so its windows are longer (50 calls) and it keeps
// Netflix's queue thresholds at limits under 100 (3, 6, 1).
const (
	c5VegasRecordsWindow    = 10
	c5VegasEnrichmentWindow = 50
)

// AdaptiveLimit is one dependency's adaptive limit: exactly one algorithm.
type AdaptiveLimit struct {
	AIMD  *budgets.AIMD  `json:"aimd,omitempty" yaml:"aimd,omitempty"`
	Vegas *budgets.Vegas `json:"vegas,omitempty" yaml:"vegas,omitempty"`
}

// Algorithm returns the limit's algorithm, or an error when it has none or
// both.
func (a AdaptiveLimit) Algorithm() (budgets.Algorithm, error) {
	switch {
	case a.AIMD != nil && a.Vegas != nil:
		return nil, errors.New("give one algorithm, aimd or vegas, not both")
	case a.AIMD != nil:
		return *a.AIMD, nil
	case a.Vegas != nil:
		return *a.Vegas, nil
	}
	return nil, errors.New("give an algorithm: aimd or vegas")
}

// Validate names the first bad field ("vegas.beta: …").
func (a AdaptiveLimit) Validate() error {
	alg, err := a.Algorithm()
	if err != nil {
		return err
	}
	if err := alg.Validate(); err != nil {
		return fmt.Errorf("%s.%w", a.Name(), err)
	}
	return nil
}

// Name is the algorithm's name (AlgAIMD or AlgVegas), "" when it has none.
func (a AdaptiveLimit) Name() AdaptiveAlg {
	switch {
	case a.AIMD != nil:
		return AlgAIMD
	case a.Vegas != nil:
		return AlgVegas
	}
	return ""
}

// Bounds are the limit's initial value, floor and ceiling.
func (a AdaptiveLimit) Bounds() (initial, floor, ceiling int) {
	switch {
	case a.AIMD != nil:
		return a.AIMD.Initial, a.AIMD.Floor, a.AIMD.Ceiling
	case a.Vegas != nil:
		return a.Vegas.Initial, a.Vegas.Floor, a.Vegas.Ceiling
	}
	return 0, 0, 0
}

// Describe is the limit in words.
func (a AdaptiveLimit) Describe() string {
	switch {
	case a.AIMD != nil:
		return fmt.Sprintf("AIMD from %d in [%d, %d], ×%g on a drop", a.AIMD.Initial, a.AIMD.Floor, a.AIMD.Ceiling, a.AIMD.Backoff)
	case a.Vegas != nil:
		v := a.Vegas
		return fmt.Sprintf("Vegas from %d in [%d, %d], queue thresholds α %d β %d threshold %d, windows of %d calls, probe %d",
			v.Initial, v.Floor, v.Ceiling, v.Alpha, v.Beta, v.Threshold, v.Window, v.Probe)
	}
	return "no algorithm"
}

// C5Adaptive is C5's adaptive limit per dependency of the lab with
// algorithm alg (AlgAIMD or AlgVegas; anything else gives AIMD).
func C5Adaptive(alg AdaptiveAlg) map[string]AdaptiveLimit {
	if alg == AlgVegas {
		return map[string]AdaptiveLimit{
			api.Enrichment: {Vegas: &budgets.Vegas{Initial: DefaultEnrichPermits, Floor: 1, Ceiling: C5EnrichmentCeiling,
				Alpha: 3, Beta: 6, Threshold: 1, Window: c5VegasEnrichmentWindow, Probe: budgets.DefaultVegasProbe}},
			api.Records: {Vegas: LabVegas(DefaultWritePermits, 1, C5RecordsCeiling)},
		}
	}
	return map[string]AdaptiveLimit{
		api.Enrichment: {AIMD: &budgets.AIMD{Initial: DefaultEnrichPermits, Floor: 1, Ceiling: C5EnrichmentCeiling, Backoff: budgets.DefaultAIMDBackoff}},
		api.Records:    {AIMD: &budgets.AIMD{Initial: DefaultWritePermits, Floor: 1, Ceiling: C5RecordsCeiling, Backoff: budgets.DefaultAIMDBackoff}},
	}
}

// LabVegas is a Vegas limit with C5-vegas's settings for writes (Alpha =
// Beta = 2, Threshold 0, windows of 10 calls, Netflix's probe) between
// floor and ceiling.
func LabVegas(initial, floor, ceiling int) *budgets.Vegas {
	return &budgets.Vegas{Initial: initial, Floor: floor, Ceiling: ceiling, Alpha: 2, Beta: 2, Threshold: 0,
		Window: c5VegasRecordsWindow, Probe: budgets.DefaultVegasProbe}
}
