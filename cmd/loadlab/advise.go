package main

import (
	"io"
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/field"
)

const adviseSynopsis = "Writes a strategy file from a probe of every dependency of a pipeline (loadlab probe --json > FILE):\n" +
	"each dependency's permits at its knee (the highest concurrency probed if it showed none; never at or\n" +
	"past its first rejection), the bottleneck (the fewest records per second at its permits), and the\n" +
	"records in flight by Little's law: target rate × time per record (the calls' mean times at the\n" +
	"lowest concurrency probed, summed), the rate capped by the bottleneck, with a warning when the target\n" +
	"exceeds it. A dependency without a knee gets the highest concurrency probed, and the rate measured\n" +
	"there bounds it (said as a warning: probing further may allow more). Rates are per second of the\n" +
	"probes: probes of a mock service at a time scale advise runs at the same scale.\n" +
	"Run it with loadlab run --strategy-file FILE, or as strategy \"advised\" in an experiment.\n\n" +
	"Example:\n" +
	"  loadlab probe --target http://127.0.0.1:8080/enrich --body '{\"record_id\":{{json .ID}},\"step\":1}' \\\n" +
	"      --concurrency 1,2,4,8,16,32,64,128 --max-concurrency 128 --json > enrich.json\n" +
	"  loadlab probe --target http://127.0.0.1:8080/records --body '{\"id\":{{json .ID}},\"complete\":true}' \\\n" +
	"      --concurrency 1-16 --json > records.json\n" +
	"  loadlab advise --probe enrichment=enrich.json --probe records=records.json --target-rate 150 --out advised.yaml\n"

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
