package loadgen

import (
	"slices"
	"time"

	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Second is one model second of a real run.
type Second struct {
	T        int `json:"t"`
	Arrivals int `json:"arrivals"`
	Dropped  int `json:"dropped"`
	OnTime   int `json:"on_time"`
	Rejected int `json:"rejected"`
	TooLate  int `json:"too_late"`
	GaveUp   int `json:"gave_up"`
	// Queue is the station's queue length sampled in the middle of the
	// second; -1 when it could not be read.
	Queue int `json:"queue"`
}

// Result has the admission model's keys, plus what only a real run has.
type Result struct {
	Requests      int      `json:"requests"`
	OnTime        int      `json:"on_time"`
	Rejected      int      `json:"rejected"`
	TooLate       int      `json:"too_late"`
	Unfinished    int      `json:"unfinished"`
	P95LatencyS   *float64 `json:"p95_latency_s"`
	WastedWorkerS float64  `json:"wasted_worker_s"`
	PeakQueue     int      `json:"peak_queue"`
	QueueEmptyAtS *int     `json:"queue_empty_at_s"`
	QueueFullAtS  *int     `json:"queue_full_at_s"`
	TimedOut      int      `json:"timed_out"`
	Scheduled     int      `json:"scheduled"`
	Dropped       int      `json:"dropped"`
	LateStarts    int      `json:"late_starts"`
	MaxSendLagMs  float64  `json:"max_send_lag_ms"`
	Errors        int      `json:"errors"`
	ServerJoined  bool     `json:"server_joined"`
	TieWindowS    float64  `json:"tie_window_s"`
	TimeScale     float64  `json:"time_scale"`
	Timeline      []Second `json:"timeline"`
}

// joinInput is everything the join reads: the generator's records and the
// server's, both complete. Times on the server's clock are ours plus offset.
type joinInput struct {
	start, end time.Time
	unit       time.Duration // one model second
	seconds    int           // the run's length in model seconds
	requests   []request
	dropped    []time.Duration // scheduled offsets of dropped arrivals
	late       int
	maxLag     time.Duration
	log        *api.RequestLogSnapshot // nil: the target keeps none
	offset     time.Duration
	queue      []int // per second; -1 unread
	queueCap   int   // the station's queue capacity; ≤ 0 unknown or unbounded
	tieWindow  float64
	timeScale  float64
}

// join gives every sent request exactly one outcome from what the client
// saw and, for requests it gave up on, what the server's log says of them;
// and it counts everything per model second. It is a pure function.
func join(in joinInput) Result {
	res := Result{Requests: len(in.requests), Dropped: len(in.dropped), Scheduled: len(in.requests) + len(in.dropped),
		LateStarts: in.late, MaxSendLagMs: float64(in.maxLag) / float64(time.Millisecond),
		ServerJoined: in.log != nil, TieWindowS: in.tieWindow, TimeScale: in.timeScale}
	tl := make([]Second, in.seconds)
	for t := range tl {
		tl[t] = Second{T: t, Queue: -1}
		if t < len(in.queue) {
			tl[t].Queue = in.queue[t]
		}
	}
	second := func(at time.Time) int {
		return min(max(int(at.Sub(in.start)/in.unit), 0), len(tl)-1)
	}
	for _, off := range in.dropped {
		tl[second(in.start.Add(off))].Dropped++
	}
	server := map[string]api.RequestEntry{}
	if in.log != nil {
		for _, e := range in.log.Entries {
			server[e.ID] = e
		}
	}
	serverEnd := in.end.Add(in.offset)
	var latencies []float64
	for _, q := range in.requests {
		tl[second(q.scheduled)].Arrivals++
		switch q.reply {
		case ReplyOnTime:
			res.OnTime++
			tl[second(q.replied)].OnTime++
			latencies = append(latencies, float64(q.replied.Sub(q.scheduled))/float64(in.unit))
		case ReplyRejected:
			res.Rejected++
			tl[second(q.replied)].Rejected++
		case ReplyGaveUp:
			tl[second(q.deadline)].GaveUp++
			e, ok := server[q.id]
			switch {
			case in.log == nil:
				res.TimedOut++
			case ok && e.Finished != nil && e.Started != nil && e.Finished.Before(serverEnd):
				res.TooLate++
				tl[second(e.Finished.Add(-in.offset))].TooLate++
				res.WastedWorkerS += float64(e.Finished.Sub(*e.Started)) / float64(in.unit)
			default:
				res.Unfinished++
			}
		case ReplyError:
			res.Errors++
			res.Unfinished++
		default: // pending at the end
			res.Unfinished++
		}
	}
	if len(latencies) > 0 {
		slices.Sort(latencies)
		p := models.NearestRank(latencies, 0.95)
		res.P95LatencyS = &p
	}
	last := -1
	for _, s := range tl {
		res.PeakQueue = max(res.PeakQueue, s.Queue)
		if s.Queue > 0 {
			last = s.T
		}
		if in.queueCap > 0 && s.Queue == in.queueCap && res.QueueFullAtS == nil {
			t := s.T
			res.QueueFullAtS = &t
		}
	}
	if last >= 0 {
		empty := last + 1
		res.QueueEmptyAtS = &empty
	}
	res.Timeline = tl
	return res
}
