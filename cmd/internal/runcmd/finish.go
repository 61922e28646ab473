package runcmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loadlab/loadlab/client/records"
)

// finish is how a run that returned res and err ends: its report, or an
// error that says what to do.
func (o *runOptions) finish(stdout io.Writer, res records.Result, err error) error {
	for _, e := range []error{records.ErrUnreachable, records.ErrTimeScaleMismatch, records.ErrNotMock, records.ErrAdmin} {
		if errors.Is(err, e) {
			return usageErr("%v", runHint(err))
		}
	}
	if err != nil {
		return err
	}
	return o.report(stdout, res)
}

// runHint adds to an error of a target unfit for the run the flag that
// mends it, where there is one.
func runHint(err error) error {
	switch {
	case errors.Is(err, records.ErrReset):
		return fmt.Errorf("%w (give --admin-token, or --reset=false)", err)
	case errors.Is(err, records.ErrUnreachable):
		return fmt.Errorf("run: %s (is it running? --wait 10s waits for one that is starting)", strings.TrimPrefix(err.Error(), "records: "))
	}
	return err
}
