package api

import "time"

// Stats is the JSON of GET /admin/stats, and what Client.Scrape rebuilds
// from /metrics.
type Stats struct {
	Profile         string  `json:"profile"`
	TimeScale       float64 `json:"time_scale"`
	StoredWrites    int     `json:"stored_writes"`
	DuplicateWrites int     `json:"duplicate_writes"`
	// Seed is the enrichment station's seed since the last reset; the
	// system of record draws from RecordsSeed(Seed).
	Seed     uint32                  `json:"seed"`
	Stations map[string]StationStats `json:"stations"`
}

// StationStats is a consistent snapshot of a station's counters and gauges.
// Counters and high-water marks are since the last reset.
type StationStats struct {
	Workers       int                 `json:"workers"`
	QueueCapacity int                 `json:"queue_capacity"`
	Busy          int                 `json:"busy"`
	QueueLength   int                 `json:"queue_length"`
	Offered       int                 `json:"offered"`
	HighWater     HighWater           `json:"high_water"`
	Requests      map[Outcome]float64 `json:"requests"`
	WastedSeconds float64             `json:"wasted_worker_seconds"`
	// Draws is how many service times the station drew since the last
	// reset, PlannedLabSeconds their sum in lab seconds (before the time
	// scale; after a virtual copy's slowdown): the seeded draws
	// themselves, free of timer noise.
	Draws             int     `json:"draws"`
	PlannedLabSeconds float64 `json:"planned_lab_seconds"`
	// RateLimited counts the requests a token bucket in front of the
	// station refused since the last reset (a virtual copy's rate limit;
	// the lab's stations have none). They never reached the station, so
	// no outcome of Requests counts them: every request answered is in
	// exactly one of Requests' outcomes or here.
	RateLimited float64 `json:"rate_limited,omitempty"`
}

// HighWater holds the largest values seen since the last reset.
type HighWater struct {
	// Offered is the most requests open at the station at once, including
	// those being refused: the concurrency the clients offered. A request
	// counts once its body is complete and valid, so one still sending its
	// body, or refused for bad input, is not offered.
	Offered int `json:"offered"`
	Busy    int `json:"busy"`
	Queue   int `json:"queue"`
}

// RequestEntry is one request's passage through a station, as the server saw
// it. Started is nil for requests never served; Finished and Outcome are
// empty while the request is queued or in service.
type RequestEntry struct {
	ID       string     `json:"id"`
	Service  string     `json:"service"`
	Arrived  time.Time  `json:"arrived"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	Outcome  Outcome    `json:"outcome,omitempty"`
}

// RequestLogSnapshot is the JSON of GET /admin/requests.
type RequestLogSnapshot struct {
	// Now is the server's clock when the snapshot was taken.
	Now     time.Time      `json:"now"`
	Entries []RequestEntry `json:"entries"`
	// Dropped counts requests not logged because the log was full.
	Dropped int `json:"dropped"`
}
