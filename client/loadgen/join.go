package loadgen

import (
	"maps"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/mockservice/api"
)

// Second is one model second of a real run.
type Second struct {
	T        int `json:"t"`
	Arrivals int `json:"arrivals"`
	Dropped  int `json:"dropped"`
	Behind   int `json:"behind"`
	OnTime   int `json:"on_time"`
	Rejected int `json:"rejected"`
	TooLate  int `json:"too_late"`
	GaveUp   int `json:"gave_up"`
	// Queue is the station's queue length sampled in the middle of the
	// second; -1 when it could not be read.
	Queue int `json:"queue"`
}

// Result has the admission model's keys, plus what only a real run has.
// Every sent request is counted in exactly one outcome: OnTime + Rejected +
// TooLate + Unfinished + Cancelled + TimedOut + Unjoined + ErrorStatus +
// TransportErrors = Requests; and Requests + Dropped + Behind = Scheduled.
type Result struct {
	// Segment is the part of the schedule this generator sent (Load with
	// Config.Segment); nil for a whole run, and for a merge of segments.
	// First, so that the JSON says at once whether it is a segment.
	Segment *Segment `json:"segment,omitempty"`
	// MergedSegments is how many segments loadresult.Merge combined into
	// this result; 0 for one generator's run.
	MergedSegments int `json:"merged_segments,omitempty"`

	Requests      int      `json:"requests"`
	OnTime        int      `json:"on_time"`
	Rejected      int      `json:"rejected"`
	TooLate       int      `json:"too_late"`
	Unfinished    int      `json:"unfinished"`
	P95LatencyS   *float64 `json:"p95_latency_s"`
	WastedWorkerS float64  `json:"wasted_worker_s"`
	// PeakQueue is the largest queue length of the mid-second samples (the
	// model's key: its queue at the end of each second); QueueHighWater is
	// the station's own high-water mark, transients included.
	PeakQueue      int  `json:"peak_queue"`
	QueueHighWater *int `json:"queue_high_water"`
	QueueEmptyAtS  *int `json:"queue_empty_at_s"`
	QueueFullAtS   *int `json:"queue_full_at_s"`
	Cancelled      int  `json:"cancelled"`
	TimedOut       int  `json:"timed_out"`
	Unjoined       int  `json:"unjoined"`
	ErrorStatus    int  `json:"error_status"`
	// StatusCodes counts the answers of ErrorStatus by HTTP status.
	StatusCodes     map[int]int `json:"status_codes"`
	TransportErrors int         `json:"transport_errors"`
	Scheduled       int         `json:"scheduled"`
	Dropped         int         `json:"dropped"`
	// Behind counts arrivals that fell due and were not sent within the
	// late threshold of their time, or before the run ended: a generator
	// that fell behind its schedule.
	Behind       int     `json:"behind"`
	LateStarts   int     `json:"late_starts"`
	MaxSendLagMs float64 `json:"max_send_lag_ms"`
	// Latency of on-time requests, in model seconds: from the scheduled
	// time (what a user waits, free of coordinated omission) and from the
	// moment the request was written (what the target did).
	LatencyFromSchedule Latency `json:"latency_from_schedule"`
	LatencyFromSend     Latency `json:"latency_from_send"`
	// The two latency histograms themselves (real microseconds, HDR's V2
	// compressed encoding in base64, as hdrhistogram.Decode reads it):
	// loadresult.Merge adds them up and recomputes the percentiles exactly.
	LatencyFromScheduleHDR string `json:"latency_from_schedule_hdr,omitempty"`
	LatencyFromSendHDR     string `json:"latency_from_send_hdr,omitempty"`
	// ServerJoined: the target is a loadlab mock service whose request log
	// was read and held every request the join needed (Unjoined is 0).
	ServerJoined bool `json:"server_joined"`
	// ServerIdentified: the target identified itself as a loadlab mock
	// service; when false, only client-side figures were measured and no
	// request but the load was sent to it.
	ServerIdentified bool    `json:"server_identified"`
	TieWindowS       float64 `json:"tie_window_s"`
	TimeScale        float64 `json:"time_scale"`
	// The run: its scenario (the schedule, and the endpoint's description
	// as Config.Endpoint gave it), arrival mode, target and the moment its
	// model second 0 began (Config.StartAt when given), by which
	// loadresult.Merge checks segments are of one schedule.
	Scenario Scenario  `json:"scenario,omitzero"`
	Arrivals Arrivals  `json:"arrivals,omitempty"`
	Target   string    `json:"target,omitempty"`
	StartAt  time.Time `json:"start_at,omitzero"`
	// Client names the HTTP client that sent the load (an HTTPClient; a
	// merge's, its segments' clients joined by commas) and MaxInFlight the
	// cap on requests awaiting an outcome in force, given or derived:
	// arrivals that found it reached are Dropped.
	Client      string `json:"client"`
	MaxInFlight int    `json:"max_in_flight"`
	// Senders is the open generator's pool at its largest: the senders it
	// started, each a goroutine with a connection of its own (a merge's:
	// its segments' together). Far more senders than the rate times the
	// latency means the generator's core could not keep up with the
	// replies.
	Senders int `json:"senders,omitempty"`
	// SentPerRealSecond is the requests sent per real second of the run
	// (its seconds so far when it was interrupted). Saturated: the
	// generator could not keep its own schedule, whatever the target did:
	// over 1% of the scheduled arrivals were behind, or over 1% of the
	// requests were written later than the late threshold after their
	// time. The figures are then those of a load other than the
	// schedule's: give the generator more CPU, or split the load into
	// segments.
	SentPerRealSecond float64 `json:"sent_per_real_second"`
	Saturated         bool    `json:"generator_saturated"`
	// Partial: the run was interrupted; the figures, and the timeline, are
	// those of the seconds before it ended.
	Partial bool `json:"partial"`
	// LogError says why the request log could not be read, when it could
	// not: the requests the join needed are then unjoined.
	LogError string   `json:"log_error,omitempty"`
	Timeline []Second `json:"timeline"`
}

// tally is what the generator counted while the run went on.
type tally struct {
	sent, dropped, behind, late int
	senders                     int
	maxLag                      time.Duration
	replies                     map[Reply]int
	statuses                    map[int]int
	timeline                    []Second
	joinable                    []request
	overflow                    map[Reply]int // gave up or pending, beyond the join's bound
	fromSchedule                *hdrhistogram.Histogram
	fromSend                    *hdrhistogram.Histogram
}

// joinInput is everything the join reads. Times on the server's clock are
// ours plus offset.
type joinInput struct {
	tally
	start, end time.Time
	unit       time.Duration           // one model second
	log        *api.RequestLogSnapshot // nil: the target keeps none
	offset     time.Duration
	queue      []int // per second; -1 unread
	queueCap   int   // the station's queue capacity; ≤ 0 unknown or unbounded
	identified bool
	tieWindow  float64
	timeScale  float64
	// Set when the run was interrupted: its seconds so far.
	partial bool
	seconds int
	// What the log and the metrics said, or why they could not be read.
	logError       string
	queueHighWater *int
}

// MeasureSending sets SentPerRealSecond and Saturated from the counts,
// the timeline's length and the time scale.
func (r *Result) MeasureSending() {
	r.SentPerRealSecond = r.PerRealSecond(r.Requests)
	r.Saturated = 100*r.Behind > r.Scheduled || 100*r.LateStarts > r.Requests
}

// PerRealSecond is n per real second of the run (its timeline's seconds
// at its time scale), 0 for a run of no length.
func (r Result) PerRealSecond(n int) float64 {
	if secs := float64(len(r.Timeline)) * r.TimeScale; secs > 0 {
		return float64(n) / secs
	}
	return 0
}

// join gives every request the client gave up on, or that was pending at
// the end, its outcome from the server's log, and adds up the rest from
// what the client counted. It is a pure function.
func join(in joinInput) Result {
	res := Result{Requests: in.sent, Dropped: in.dropped, Behind: in.behind, Scheduled: in.sent + in.dropped + in.behind,
		OnTime: in.replies[ReplyOnTime], Rejected: in.replies[ReplyRejected], ErrorStatus: in.replies[ReplyStatus],
		TransportErrors: in.replies[ReplyTransport], StatusCodes: maps.Clone(in.statuses),
		LateStarts: in.late, Senders: in.senders, MaxSendLagMs: float64(in.maxLag) / float64(time.Millisecond),
		ServerIdentified: in.identified, TieWindowS: in.tieWindow, TimeScale: in.timeScale,
		Partial: in.partial, LogError: in.logError, QueueHighWater: in.queueHighWater}
	res.SetLatency(in.fromSchedule, in.fromSend, in.unit)
	if res.StatusCodes == nil {
		res.StatusCodes = map[int]int{}
	}
	res.Timeline = in.sampledTimeline()
	in.joinRequests(&res)
	res.MeasureSending()
	if in.log != nil && res.Unjoined == 0 {
		res.ServerJoined = true
	}
	in.queueFigures(&res)
	return res
}

// sampledTimeline is the generator's timeline (an interrupted run's, to
// where it ended), numbered, with the queue's samples.
func (in joinInput) sampledTimeline() []Second {
	tl := slices.Clone(in.timeline)
	if in.partial {
		tl = tl[:max(in.seconds, 1)]
	}
	for t := range tl {
		tl[t].T, tl[t].Queue = t, -1
		if t < len(in.queue) {
			tl[t].Queue = in.queue[t]
		}
	}
	return tl
}

// joinRequests gives each request the client gave up on, or that was
// pending at the end, its outcome: by the server's log when there is one, and
// unjoined when the log was unreadable or lacks it; timed out or
// unfinished when there is no log to ask. A request served too late is
// counted in the timeline's second the server finished it.
func (in joinInput) joinRequests(res *Result) {
	server := map[string]api.RequestEntry{}
	if in.log != nil {
		for _, e := range in.log.Entries {
			server[e.ID] = e
		}
	}
	tl := res.Timeline
	second := func(at time.Time) int {
		return min(max(int(at.Sub(in.start)/in.unit), 0), len(tl)-1)
	}
	serverEnd := in.end.Add(in.offset)
	switch {
	case in.log != nil || in.logError != "":
		res.Unjoined = in.overflow[ReplyGaveUp] + in.overflow[ReplyPending] // beyond the join's bound
	default: // no log to ask, as for the others
		res.TimedOut, res.Unfinished = in.overflow[ReplyGaveUp], in.overflow[ReplyPending]
	}
	for _, q := range in.joinable {
		e, ok := server[q.id]
		switch {
		case in.logError != "":
			res.Unjoined++
		case in.log == nil && q.reply == ReplyGaveUp:
			res.TimedOut++
		case in.log == nil:
			res.Unfinished++ // pending at the end, nothing to ask
		case !ok:
			res.Unjoined++
		case e.Outcome == api.OutcomeCancelled:
			res.Cancelled++
		case e.Finished != nil && e.Started != nil && e.Finished.Before(serverEnd) && q.reply == ReplyGaveUp:
			res.TooLate++
			tl[second(e.Finished.Add(-in.offset))].TooLate++
			res.WastedWorkerS += float64(e.Finished.Sub(*e.Started)) / float64(in.unit)
		default: // queued, in service or finishing after the end
			res.Unfinished++
		}
	}
}

// queueFigures sets the queue's peak, the second it was first full (at
// the station's capacity) and the second it was empty again, from the
// timeline's samples.
func (in joinInput) queueFigures(res *Result) {
	last := -1
	for _, s := range res.Timeline {
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
}

// Outcomes returns the count of every outcome, in Outcomes' order: they add
// up to Requests.
func (r Result) Outcomes() map[Outcome]int {
	return map[Outcome]int{OnTime: r.OnTime, Rejected: r.Rejected, TooLate: r.TooLate, Unfinished: r.Unfinished,
		Cancelled: r.Cancelled, TimedOut: r.TimedOut, Unjoined: r.Unjoined, ErrorStatus: r.ErrorStatus,
		TransportError: r.TransportErrors}
}
