package loadgen

// OpeningRun is the admission document's opening run, which the tests
// start from: an open ramp of 2 requests/s, 8/s from 10 s to 40 s, a 10 s
// client timeout, over 60 s (closed: 16 users thinking 1 s), against 8
// workers of 2 s and a queue of 20.
func OpeningRun() (Schedule, Endpoint) {
	return Schedule{Timeout: 10, Mode: Open, BaseRate: 2, PeakRate: 8, RampStart: 10, RampEnd: 40, Users: 16, Think: 1, Duration: 60},
		Endpoint{Workers: 8, ServiceTime: 2, Queue: 20}
}

// OpeningSchedule is OpeningRun's schedule.
func OpeningSchedule() Schedule {
	sc, _ := OpeningRun()
	return sc
}
