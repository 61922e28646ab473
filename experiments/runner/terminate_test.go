package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTerminateAsksThenKills: a child whose run ends is first asked to
// stop (SIGTERM), and one that ignores it is killed (SIGKILL) once the
// grace has passed; Wait returns either way.
func TestTerminateAsksThenKills(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "term")
	for _, tc := range []struct {
		name, script string
		signal       syscall.Signal // the signal that ended it, 0: exited
	}{
		{"stops when asked", `trap 'echo asked > ` + mark + `; exit 0' TERM; echo ready; while :; do sleep 0.01; done`, 0},
		{"killed when it does not", `trap '' TERM; echo ready; while :; do sleep 0.01; done`, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(mark)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", tc.script)
			terminate(cmd, 200*time.Millisecond)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := out.Read(make([]byte, 6)); err != nil { // the trap is set
				t.Fatal(err)
			}
			cancel()
			err = cmd.Wait()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case tc.signal == 0 && (!ws.Exited() || ws.ExitStatus() != 0):
				t.Errorf("ended %v (%v), want exit 0 after SIGTERM", ws, err)
			case tc.signal != 0 && (!ws.Signaled() || ws.Signal() != tc.signal):
				t.Errorf("ended %v (%v), want killed by %v", ws, err, tc.signal)
			}
			_, statErr := os.Stat(mark)
			if tc.signal == 0 && statErr != nil {
				t.Errorf("the child's TERM trap did not run: %v", statErr)
			}
		})
	}
}
