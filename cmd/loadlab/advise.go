package main

import (
	"io"
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/field"
)

var adviseSynopsis = synopsis("advise")

func runAdvise(args []string, stdout io.Writer) error {
	opts, err := adviseOptions(args, stdout)
	if err != nil {
		return err
	}
	report, err := advise.Execute(opts, time.Now())
	if err != nil {
		return usageErr("advise: %v", adviseFlagNames(opts).Rename(err))
	}
	return report.Print(stdout)
}

// adviseOptions reads loadlab advise's flags.
func adviseOptions(args []string, stdout io.Writer) (advise.Options, error) {
	var o advise.Options
	fs, parse := newFlagSet("advise", adviseSynopsis, stdout)
	fs.Func("probe", "DEPENDENCY=FILE: a probe's JSON for one dependency of the pipeline (once per dependency)", o.AddProbe)
	fs.StringVar(&o.Pipeline, "pipeline", "", "the pipeline file (default: the lab's, "+pipeline.LabFile+")")
	fs.Float64Var(&o.TargetRate, "target-rate", 0, "records per second wanted, in the probes' seconds (0: as fast as the bottleneck allows)")
	fs.StringVar(&o.Name, "name", "advised", "the strategy's name")
	fs.StringVar(&o.Out, "out", "", "write the strategy file here (default: print it)")
	fs.BoolVar(&o.JSON, "json", false, "print the advice as one JSON object (the file is still written with --out)")
	err := parse(args) // before o is read: the flags write into it
	return o, err
}

// adviseFlagNames names advise.Options' fields as loadlab advise's flags:
// a probe's file as the --probe that gave it.
func adviseFlagNames(o advise.Options) field.Names {
	names := field.Names{"pipeline": "--pipeline", "probes": "--probe", "target_rate": "--target-rate", "out": "--out"}
	for dep := range o.Probes {
		names["probes."+dep] = "--probe " + dep
	}
	return names
}
