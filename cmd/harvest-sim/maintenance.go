package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/cli"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/maintsim"
	"github.com/harvest-platform/harvest/sim/plots"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// maintenanceFlags are harvest-sim maintenance's settings.
type maintenanceFlags struct {
	trace, urgencies, work, forfeit string
	from, to                        string
	step                            time.Duration
	outputs
}

func maintenanceCommand() cli.CommandFactory {
	var f maintenanceFlags
	return command.Simple{
		Name: "harvest-sim maintenance", Synopsis: "Replay a batch trace: work forfeited by maintenance started on accumulated work (AW) or running jobs (CL)",
		Usage: "harvest-sim maintenance -trace batch_task.csv.gz [-step 60s] [-urgencies 1,2,5,10,20] [-work containers|cores] [-forfeit running|job] " +
			"[-json] [-json-file F] [-csv F] [-plot F]",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.trace, "trace", "", "Alibaba 2017 batch_task.csv[.gz] (required): a task is an allocation of its instances from create to end")
			fs.DurationVar(&f.step, "step", time.Minute, "time between the points where the workload is measured (the source: every minute)")
			fs.StringVar(&f.urgencies, "urgencies", "1,2,5,10,20", "urgency levels: the percentile of the profile taken as the threshold")
			fs.StringVar(&f.work, "work", "containers", "work unit: containers (instance x second, the source's container x second) or cores (x requested cores)")
			fs.StringVar(&f.forfeit, "forfeit", "running", "what maintenance loses: running (maintenance.AccumulatedWork, running allocations' work) "+
				"or job (every unfinished job's work, finished tasks included)")
			fs.StringVar(&f.from, "from", "", "replay from this trace time (a duration from the trace's second 0, such as 6h); empty: the first task's create")
			fs.StringVar(&f.to, "to", "", "replay up to this trace time (such as 16h30m); empty: the last task's end")
			f.register(fs, "write one row per urgency as CSV", "draw mean forfeited work per urgency, AW against CL (PNG or SVG)")
		},
		Run: func(_ context.Context, _ *flag.FlagSet) error { return runMaintenance(f) },
	}.Factory()
}

func runMaintenance(f maintenanceFlags) error {
	if f.trace == "" {
		return fmt.Errorf("want -trace: an Alibaba 2017 batch_task.csv[.gz]")
	}
	urgencies, err := splitInts("urgencies", f.urgencies)
	if err != nil {
		return err
	}
	began := time.Now()
	tasks, err := readTrace(f.trace, schedsim.ParseAlibabaTasks)
	if err != nil {
		return err
	}
	origin := time.Unix(0, 0).UTC() // the trace's second 0
	allocs, err := maintsim.FromAlibaba(tasks, origin, f.work)
	if err != nil {
		return fmt.Errorf("-work: %w", err)
	}
	cfg := maintsim.Config{Step: f.step, Urgencies: urgencies, Forfeit: maintsim.Forfeit(f.forfeit)}
	for _, b := range []struct {
		name, v string
		t       *time.Time
	}{{"from", f.from, &cfg.From}, {"to", f.to, &cfg.To}} {
		if b.v == "" {
			continue
		}
		d, err := time.ParseDuration(b.v)
		if err != nil {
			return fmt.Errorf("-%s: %w", b.name, err)
		}
		*b.t = origin.Add(d)
	}
	res, err := maintsim.Evaluate(allocs, cfg)
	if err != nil {
		return err
	}
	unit := map[string]string{"containers": "container", "cores": "core"}[f.work]
	hours := func(t time.Time) float64 { return t.Sub(origin).Hours() }
	split := "the first day profiles, the second is evaluated"
	if res.To.Sub(res.From) < 48*time.Hour {
		split = "shorter than two days: the first half profiles, the second half is evaluated"
	}
	summary := map[string]any{"trace": f.trace, "work_unit": unit + "-seconds", "result": res, "split": split,
		"from": f.from, "to": f.to, "profile_hours": []float64{hours(res.From), hours(res.Split)}, "evaluation_hours": []float64{hours(res.Split), hours(res.To)},
		"wall_seconds": time.Since(began).Seconds()}
	csv := func(path string) error { return writeMaintenanceCSV(path, res) }
	plot := func(path string) error {
		var cats []string
		series := []plots.BarSeries{{Name: "AW (accumulated work)"}, {Name: "CL (running jobs)"},
			{Name: "AW, perfect forecast"}, {Name: "CL, perfect forecast"}}
		for _, l := range res.Levels {
			cats = append(cats, fmt.Sprintf("P%d", l.Urgency))
			for i, r := range []maintsim.Rule{l.AW, l.CL, l.PerfectAW, l.PerfectCL} {
				series[i].Values = append(series[i].Values, r.MeanForfeit/3600)
			}
		}
		title := fmt.Sprintf("Mean work forfeited by maintenance per urgency (%s; no bar: no point met the threshold)", f.forfeit)
		return plots.GroupedBars(path, title, unit+"-hours forfeited", cats, series, false)
	}
	return f.emit(summary, csv, plot, func() {
		fmt.Printf("%s: %d tasks, replayed from %.2f h to %.2f h (trace time), %s: profile [%.2f h, %.2f h), evaluation [%.2f h, %.2f h), every %s; "+
			"forfeit: %s, in %s-hours\n", f.trace, res.Allocs, hours(res.From), hours(res.To), split, hours(res.From), hours(res.Split),
			hours(res.Split), hours(res.To), f.step, f.forfeit, unit)
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "URGENCY\tAW THRESHOLD\tAW POINTS\tAW MEAN FORFEIT\tCL THRESHOLD (jobs)\tCL POINTS\tCL MEAN FORFEIT\tAW SAVING %%\t"+
			"PERFECT FORECAST: AW POINTS\tAW MEAN FORFEIT\tCL POINTS\tCL MEAN FORFEIT\tAW SAVING %%\n")
		pct := func(v *float64) string {
			if v == nil {
				return "-"
			}
			return fmt.Sprintf("%.1f", *v)
		}
		for _, l := range res.Levels {
			fmt.Fprintf(tw, "P%d\t%.1f\t%d/%d\t%.1f\t%.0f\t%d/%d\t%.1f\t%s\t%d\t%.1f\t%d\t%.1f\t%s\n", l.Urgency, l.AW.Threshold/3600, l.AW.Candidates,
				res.EvalPoints, l.AW.MeanForfeit/3600, l.CL.Threshold, l.CL.Candidates, res.EvalPoints, l.CL.MeanForfeit/3600, pct(l.AWSaving),
				l.PerfectAW.Candidates, l.PerfectAW.MeanForfeit/3600, l.PerfectCL.Candidates, l.PerfectCL.MeanForfeit/3600, pct(l.PerfectSaving))
		}
		tw.Flush()
		fmt.Printf("%.1f s wall\n", time.Since(began).Seconds())
	})
}

func writeMaintenanceCSV(path string, res maintsim.Result) error {
	rows := [][]string{{"urgency", "evaluation_points", "aw_threshold", "aw_candidate_points", "aw_mean_forfeit", "cl_threshold",
		"cl_candidate_points", "cl_mean_forfeit", "aw_saving_percent", "perfect_aw_threshold", "perfect_aw_candidate_points",
		"perfect_aw_mean_forfeit", "perfect_cl_threshold", "perfect_cl_candidate_points", "perfect_cl_mean_forfeit", "perfect_aw_saving_percent"}}
	pct := func(v *float64) string {
		if v == nil {
			return ""
		}
		return ftoa(*v)
	}
	for _, l := range res.Levels {
		row := []string{strconv.Itoa(l.Urgency), strconv.Itoa(res.EvalPoints)}
		for i, r := range []maintsim.Rule{l.AW, l.CL, l.PerfectAW, l.PerfectCL} {
			row = append(row, ftoa(r.Threshold), strconv.Itoa(r.Candidates), ftoa(r.MeanForfeit))
			if i == 1 {
				row = append(row, pct(l.AWSaving))
			}
		}
		rows = append(rows, append(row, pct(l.PerfectSaving)))
	}
	return writeCSV(path, rows)
}
