package dashboard

import (
	"encoding/json"
	"math"
	"strconv"
)

// Rows are a chart's rows, [x, y1, y2, …] each. A value NaN is no point:
// it goes to the browser as null, which dygraphs draws as a break in the
// series' line, so points on either side of it are never joined.
type Rows [][]float64

// MarshalJSON writes the rows as arrays of numbers, NaN and the
// infinities as null.
func (rs Rows) MarshalJSON() ([]byte, error) {
	if rs == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, v := range r {
			if j > 0 {
				b = append(b, ',')
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				b = append(b, "null"...)
				continue
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads rows as MarshalJSON writes them, null as NaN.
func (rs *Rows) UnmarshalJSON(b []byte) error {
	var raw [][]*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*rs = nil
		return nil
	}
	out := make(Rows, len(raw))
	for i, r := range raw {
		out[i] = make([]float64, len(r))
		for j, v := range r {
			out[i][j] = math.NaN()
			if v != nil {
				out[i][j] = *v
			}
		}
	}
	*rs = out
	return nil
}

// The sentences that say what a page's time unit is.
const (
	labSecond = "A lab second is a second of the lab's timeline: real seconds ÷ the time scale (at time scale 0.25 a lab " +
		"second lasts a quarter of a real second), so rates per lab second compare across time scales."
	modelSecond = "A model second is a second of the load's model: real seconds ÷ the time scale (at --time-scale 0.1 a " +
		"model second lasts a tenth of a real second)."
)

// timeUnit is the sentence that says the time unit of a kind of work's
// charts.
func timeUnit(kind string) string {
	if kind == "load" {
		return modelSecond
	}
	return labSecond
}
