package dashboard

import "time"

// Statuses of the work.
const (
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// State is everything the page shows, sent whole at each push.
type State struct {
	Kind    string    `json:"kind"`
	Title   string    `json:"title"`
	Status  string    `json:"status"`
	Message string    `json:"message,omitempty"`
	Report  string    `json:"report,omitempty"`
	Started time.Time `json:"started"`
	Now     time.Time `json:"now"`
	// TimeUnit says in a sentence what the charts' time unit is (a lab
	// second, a model second) and how it relates to real time.
	TimeUnit string `json:"time_unit,omitempty"`
	// Facts are the work's figures in a few lines ("accepted 200 of 200").
	Facts      []string    `json:"facts,omitempty"`
	Charts     []*Chart    `json:"charts"`
	Experiment *Experiment `json:"experiment,omitempty"`
	// Dropped counts the states a browser was sent but never read because
	// newer ones replaced them before it caught up (the page says
	// "updates not shown"); the newest is always shown.
	Dropped int64 `json:"dropped"`
}

// Chart is one chart: rows of [x, y1, y2, …] under its labels (x's
// first; a value NaN is no point, a break in its series' line). Each axis
// is labelled in words with its unit ("lab seconds since the run began",
// "accepted records per lab second"); YUnit is the unit the legend says
// after each value of a point ("calls", "records per lab second").
type Chart struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	XLabel string   `json:"xlabel"`
	YLabel string   `json:"ylabel"`
	YUnit  string   `json:"yunit"`
	Labels []string `json:"labels"`
	Rows   Rows     `json:"rows"`
	// XWhole says the x values are whole numbers (run numbers): the x
	// axis is marked at them only.
	XWhole bool `json:"xwhole,omitempty"`
	// Dashed names the series drawn as limits (budgets).
	Dashed []string `json:"dashed,omitempty"`
}

// MaxRows is how many rows a chart keeps: the newest.
const MaxRows = 600

// Add appends a row, keeping the newest MaxRows.
func (c *Chart) Add(row ...float64) {
	c.Rows = append(c.Rows, row)
	if len(c.Rows) > MaxRows {
		c.Rows = append([][]float64(nil), c.Rows[len(c.Rows)-MaxRows:]...)
	}
}

// Chart is the state's chart of id, made with make when it has none.
func (st *State) Chart(id string, make func() *Chart) *Chart {
	for _, c := range st.Charts {
		if c.ID == id {
			return c
		}
	}
	c := make()
	c.ID = id
	st.Charts = append(st.Charts, c)
	return c
}

// Experiment is an experiment's matrix and verdicts.
type Experiment struct {
	// Runs is the runs per cell; Cells the matrix's rows in order.
	Runs        int          `json:"runs"`
	Cells       []CellRow    `json:"cells"`
	Done        int          `json:"done"`
	Total       int          `json:"total"`
	Current     string       `json:"current,omitempty"`
	TimeLeft    string       `json:"time_left,omitempty"`
	Calibration []string     `json:"calibration,omitempty"`
	Verdicts    []VerdictRow `json:"verdicts"`
	// Final says the verdicts are the results' (not the runs' so far).
	Final bool `json:"final"`
	// Exploratory, when set, says how the experiment differs from the
	// design its hypotheses were preregistered with: its verdicts are
	// computed but are not findings (the results' verdicts say the same).
	Exploratory string `json:"exploratory,omitempty"`
}

// CellRow is a cell of the matrix: each run's status ("pending",
// "running", "valid", "failed", "contaminated", "invalid") and the median
// accepted records per lab second over its valid runs so far (the number
// alone: the page's column says the unit).
type CellRow struct {
	Cell   string   `json:"cell"`
	Runs   []string `json:"runs"`
	Median string   `json:"median,omitempty"`
}

// VerdictRow is a hypothesis and its verdict so far ("pending" until
// every cell it reads has all its runs).
type VerdictRow struct {
	ID      string `json:"id"`
	Verdict string `json:"verdict"`
	Claim   string `json:"claim"`
	Label   string `json:"label,omitempty"`
}
