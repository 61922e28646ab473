package probe

import (
	"fmt"
	"math"
)

// USL is a fit of the Universal Scalability Law,
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1)),
//
// to the successes per second X of the steps without rejections (a step
// that refused work measured the target's admission, not its scaling).
//
// The fit is linear least squares on N/X = a + b(N−1) + cN(N−1), with
// λ = 1/a, σ = b/a, κ = c/a, constrained to a > 0 and b, c ≥ 0: every
// subset of {b, c} is fitted with the others held at 0 and, of the fits
// that satisfy the constraints, the one with the least squared residual
// is kept (the exact non-negative least squares for two terms). r² is
// computed on X itself. The fit is reported as not ok, with the values it
// found, when r² < MinR2.
type USL struct {
	FitOK  bool   `json:"fit_ok"`
	Reason string `json:"reason,omitempty"`
	// Sigma (contention), Kappa (coherency) and LambdaPerSecond (one
	// user's throughput): null when no fit was computed.
	Sigma           *float64 `json:"sigma"`
	Kappa           *float64 `json:"kappa"`
	LambdaPerSecond *float64 `json:"lambda_per_second"`
	// PeakConcurrency is √((1−σ)/κ), where the fitted throughput peaks,
	// and PeakPerSecond the throughput there: null unless κ > 0 and σ < 1
	// (the fitted curve then rises for ever, or never rises).
	PeakConcurrency *float64 `json:"peak_concurrency"`
	PeakPerSecond   *float64 `json:"peak_per_second"`
	R2              *float64 `json:"r2"`
	// StepsFitted are the concurrencies of the steps fitted.
	StepsFitted []int `json:"steps_fitted"`
}

// Throughput is the fitted X(n); NaN without a fit.
func (u USL) Throughput(n float64) float64 {
	if u.Sigma == nil {
		return math.NaN()
	}
	return *u.LambdaPerSecond * n / (1 + *u.Sigma*(n-1) + *u.Kappa*n*(n-1))
}

// FitUSL fits the USL to throughputs x at concurrencies n.
func FitUSL(n, x []float64) USL {
	u := USL{StepsFitted: make([]int, len(n))}
	for i, v := range n {
		u.StepsFitted[i] = int(v)
	}
	if len(n) < MinFitSteps {
		u.Reason = fmt.Sprintf("too few steps without rejections to fit: %d, at least %d needed", len(n), MinFitSteps)
		return u
	}
	y := make([]float64, len(n))
	cols := [3][]float64{make([]float64, len(n)), make([]float64, len(n)), make([]float64, len(n))}
	for i := range n {
		if !(x[i] > 0) || !(n[i] >= 1) {
			u.Reason = fmt.Sprintf("step %d: throughput %v cannot be fitted", i, x[i])
			return u
		}
		y[i] = n[i] / x[i]
		cols[0][i], cols[1][i], cols[2][i] = 1, n[i]-1, n[i]*(n[i]-1)
	}
	best, bestSSE := [3]float64{}, math.Inf(1)
	for _, terms := range [][]int{{0, 1, 2}, {0, 1}, {0, 2}, {0}} {
		coef, ok := leastSquares(cols, terms, y)
		if !ok || !(coef[0] > 0) || coef[1] < 0 || coef[2] < 0 {
			continue
		}
		sse := 0.0
		for i := range y {
			r := y[i] - (coef[0] + coef[1]*cols[1][i] + coef[2]*cols[2][i])
			sse += r * r
		}
		if sse < bestSSE {
			best, bestSSE = coef, sse
		}
	}
	if math.IsInf(bestSSE, 1) {
		u.Reason = "the fit does not converge: no fit with σ, κ ≥ 0 and a positive single-user throughput"
		return u
	}
	lambda, sigma, kappa := 1/best[0], best[1]/best[0], best[2]/best[0]
	u.LambdaPerSecond, u.Sigma, u.Kappa = &lambda, &sigma, &kappa
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ssRes, ssTot float64
	for i := range x {
		r := x[i] - u.Throughput(n[i])
		ssRes += r * r
		ssTot += (x[i] - mean) * (x[i] - mean)
	}
	r2 := 1.0
	if ssTot > 0 {
		r2 = 1 - ssRes/ssTot
	} else if ssRes > 0 {
		r2 = 0
	}
	u.R2 = &r2
	if kappa > 0 && sigma < 1 {
		peak := math.Sqrt((1 - sigma) / kappa)
		xp := u.Throughput(peak)
		u.PeakConcurrency, u.PeakPerSecond = &peak, &xp
	}
	u.FitOK = r2 >= MinR2
	if !u.FitOK {
		u.Reason = fmt.Sprintf("fits badly: r² %.3f is below %g", r2, MinR2)
	}
	return u
}

// leastSquares solves the normal equations for the columns in terms (the
// others' coefficients stay 0), by Gaussian elimination with partial
// pivoting on columns scaled to a largest value of 1. ok is false when
// the system is singular.
func leastSquares(cols [3][]float64, terms []int, y []float64) (coef [3]float64, ok bool) {
	k := len(terms)
	scale := make([]float64, k)
	for j, t := range terms {
		for _, v := range cols[t] {
			scale[j] = max(scale[j], math.Abs(v))
		}
		if scale[j] == 0 {
			return coef, false
		}
	}
	// m is the augmented k × (k+1) matrix [AᵀA | Aᵀy] of the scaled columns.
	m := make([][]float64, k)
	for r := range k {
		m[r] = make([]float64, k+1)
		for c := range k {
			for i := range y {
				m[r][c] += cols[terms[r]][i] / scale[r] * cols[terms[c]][i] / scale[c]
			}
		}
		for i := range y {
			m[r][k] += cols[terms[r]][i] / scale[r] * y[i]
		}
	}
	for c := range k {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) < 1e-12*float64(len(y)) {
			return coef, false
		}
		m[c], m[p] = m[p], m[c]
		for r := range k {
			if r == c {
				continue
			}
			f := m[r][c] / m[c][c]
			for cc := c; cc <= k; cc++ {
				m[r][cc] -= f * m[c][cc]
			}
		}
	}
	for j, t := range terms {
		coef[t] = m[j][k] / m[j][j] / scale[j]
	}
	return coef, true
}
