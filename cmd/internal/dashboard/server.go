// Package dashboard serves a live web page of what a loadlab command is
// doing (--ui ADDR): an experiment's matrix, verdicts and runs, a record
// run's calls in flight against its budgets, a load's arrivals and
// outcomes. The page and its charting library (dygraphs, MIT, from
// Debian's libjs-dygraphs; its copyright file beside it) are embedded: it
// works offline. The state is pushed as Server-Sent Events at most twice a
// second; a browser that does not keep up skips the older states (counted,
// and the page says how many updates it did not show), never the
// measurement's time.
package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed assets
var assets embed.FS

// Push is how often the state goes to the browsers, when it changed.
const Push = 500 * time.Millisecond

// Server serves one command's dashboard.
type Server struct {
	mu      sync.Mutex
	state   State
	version uint64
	sent    uint64
	// subs are the browsers' streams; each holds at most one state.
	subs    map[chan []byte]struct{}
	dropped atomic.Int64
	srv     *http.Server
	ln      net.Listener
	stop    chan struct{}
	done    chan struct{}
	// report is the folder whose report.html /report/ serves.
	report string
	// keep serves after the work ends, until a signal; w hears where.
	keep bool
	w    io.Writer
	url  string
}

// New is the dashboard of a command of kind ("experiment", "run",
// "load") titled title; Start serves it.
func New(kind, title string) *Server {
	return &Server{state: State{Kind: kind, Title: title, Status: StatusRunning, Started: time.Now().UTC(), TimeUnit: timeUnit(kind)},
		subs: map[chan []byte]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start serves the dashboard on addr and returns its URL. A port alone
// (8089 or :8089) is on loopback: every interface takes 0.0.0.0:PORT.
func (s *Server) Start(addr string) (string, error) {
	if host, port, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort("127.0.0.1", addr)
	} else if host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(static))
	mux.HandleFunc("GET /state", s.serveState)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("GET /report/", s.serveReport)
	s.ln, s.srv = ln, &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	go s.pushLoop()
	return "http://" + ln.Addr().String() + "/", nil
}

// Update changes the state under the dashboard's lock; the browsers get it
// at the next push.
func (s *Server) Update(f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.state)
	s.version++
}

// Finish says the work ended (status and a line of what happened), and
// where its report is (a results folder, or ""); the page stays.
func (s *Server) Finish(status, message, reportDir string) {
	s.Update(func(st *State) {
		st.Status, st.Message = status, message
		if reportDir != "" {
			st.Report = "/report/"
		}
	})
	s.mu.Lock()
	s.report = reportDir
	s.mu.Unlock()
	s.push()
}

// Close stops serving, after a last push.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.mu.Lock()
	for c := range s.subs {
		close(c)
		delete(s.subs, c)
	}
	s.mu.Unlock()
	return s.srv.Shutdown(ctx)
}

// Snapshot is the state as the browsers get it, a copy of its own.
func (s *Server) Snapshot() State {
	var st State
	_ = json.Unmarshal(s.snapshotJSON(), &st)
	return st
}

// snapshotJSON is the state's JSON, encoded under the lock: its charts
// are shared with the work that adds to them.
func (s *Server) snapshotJSON() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

// snapshotLocked is snapshotJSON with s.mu held.
func (s *Server) snapshotLocked() []byte {
	st := s.state
	st.Dropped, st.Now = s.dropped.Load(), time.Now().UTC()
	b, _ := json.Marshal(st)
	return b
}

func (s *Server) pushLoop() {
	defer close(s.done)
	t := time.NewTicker(Push)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			s.push()
			return
		case <-t.C:
			s.push()
		}
	}
}

// push sends the state to every browser if it changed: into each stream's
// one slot, replacing a state the browser has not read yet (counted).
func (s *Server) push() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version == s.sent && s.sent != 0 {
		return
	}
	s.sent = s.version
	st := s.state
	st.Dropped = s.dropped.Load()
	st.Now = time.Now().UTC()
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	for c := range s.subs {
		select {
		case c <- b:
		default:
			select {
			case <-c:
				s.dropped.Add(1)
			default:
			}
			select {
			case c <- b:
			default:
			}
		}
	}
}

func (s *Server) serveState(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.snapshotJSON())
}

// serveEvents streams the state as Server-Sent Events: the whole state at
// once, then each change.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	// The first state and the subscription under one lock: a push between
	// them (the work's last, say) would reach neither this browser's first
	// state nor its channel, and nothing changes after the last.
	c := make(chan []byte, 1)
	s.mu.Lock()
	c <- s.snapshotLocked()
	s.subs[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}()
	for {
		select {
		case <-r.Context().Done():
			return
		case b, ok := <-c:
			if !ok {
				return
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// serveReport serves the results folder's report and its charts once the
// work has written them.
func (s *Server) serveReport(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	dir := s.report
	s.mu.Unlock()
	name := filepath.Base(r.URL.Path)
	if r.URL.Path == "/report/" {
		name = "report.html"
	}
	if dir == "" || name == "." || name == "/" {
		http.NotFound(w, r)
		return
	}
	http.ServeFile(w, r, filepath.Join(dir, name))
}
