package schedsim

import (
	"fmt"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
)

// Param is one setting of a preset, its value and where the value comes
// from. Source lines are of ../shared/seeds/history-based-harvesting.txt
// (the paper) unless they name another place.
type Param struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Preset is a named configuration with the source of every value.
type Preset struct {
	Name   string
	Config Config // Seed, Policy, Tenants, Scaling and Factor are the run's own
	Params []Param
	// Seeds is how many runs make a point (their mean, min and max).
	Seeds int
	// HistoryDays is the window the classifier reads before the span.
	HistoryDays int
}

// Presets are the named configurations harvest-sim sched -preset takes.
func Presets() map[string]Preset {
	return map[string]Preset{"paper": PaperPreset(), "production": ProductionPreset()}
}

// Paper is the paper preset's configuration.
func Paper() Config { return PaperPreset().Config }

// PaperPreset reproduces the setup of the paper's scheduling simulation
// (Section 6, "Simulator", Figures 13-14). Where the paper is silent the
// Source says so; each such value is an option whose effect is measured
// on its own.
func PaperPreset() Preset {
	c := Config{
		HistoryDays:     30,
		Span:            30 * 24 * time.Hour,
		Cores:           12,
		Reserve:         4,
		AdmitMargin:     0,
		Placement:       Proportional,
		Unlabelled:      Heartbeat,
		Room:            RoomPaper,
		ContainerReuse:  true,
		IdleRelease:     10 * time.Second,
		LostWork:        LostTask,
		ClassConstraint: true,
		HoldUnfit:       false,
		JobsPerHour:     3600.0 / 300,
		OfferedLoad:     0.21,
	}
	return Preset{Name: "paper", Config: c, Seeds: 5, HistoryDays: c.HistoryDays, Params: []Param{
		{"cores per server", "12", "L247 \"each server has 12 cores\"; L270 \"servers of the same size and resource reserve as in our real experiments\""},
		{"reserve", "4 cores (33%)", "L248 \"We reserve 4 cores (33%)\"; L270"},
		{"admission margin", "0", "L212-213: NM-H reports rounded primary + allocations and kills only when the reserve is short; no margin"},
		{"primary rounding", "up to whole cores", "L212 \"round them up to the next integer number of cores\" (driver/guard.RoundUp)"},
		{"eviction", "youngest container first until the reserve is back", "L213 \"killing enough containers from youngest to oldest\" (driver/guard.Evictions)"},
		{"placement", "labelled requests proportional to available cores", "L219 \"RM-H schedules a container to a heartbeating server of the correct class with a probability proportional to the server's available resources\""},
		{"unlabelled requests", "heartbeat fill: nodes in heartbeat order, each filled with what it can take", "L220 \"If Tez-H does not name a label, RM-H selects destination servers using its default policy\": YARN's schedulers assign containers to each node as its heartbeat arrives; L296 credits H's \"more balanced utilization\"; the same for every request under stock and PT. -unlabelled proportional is the option measured on its own"},
		{"no class", "run at once, default placement", "Algorithm 1 line 16 \"Do not pick classes\"; L220 \"RM-H selects destination servers using its default policy\""},
		{"class room", "1 - max(level, current utilisation, harvested work included) of each server, the reserve not taken off", "L150-153 \"For a long job, we use 1 minus Max(peak CPU utilization, current CPU utilization)\" (classify.PaperRoom); -room reserve, what the driver would admit, is the production preset's and the live placer's"},
		{"job typing", "by the job's last duration", "L3 (Algorithm 1 line 3); L140 \"comparing the duration of its last execution to two predefined thresholds\"; -type-by-class is an oracle bound, never a preset value"},
		{"classes", "a constraint (node label)", "L217 \"the request names the node label for the class\"; L218 a disjunction for several"},
		{"containers", "reused for the job's next ready task, released after 10 s idle", "L216 \"Tez-H requests the estimated maximum number of concurrent containers\"; the 10 s is Tez's default idle release timeout (tez.am.container.idle.release-timeout-max.millis), not the paper's"},
		{"lost work on a kill", "the running task", "L301 \"YARN-PT must kill (and re-run) tasks\" (finished tasks' outputs outlive the container in the node's shuffle service); -lost-work container, every task the container ran, is measured as an option"},
		{"queue", "jobs served in arrival order", "not stated by the paper: YARN's schedulers serve applications in submission order; a job's new stage or evicted work keeps its place"},
		{"arrivals", "Poisson, mean 300 s", "L254 \"Poisson inter-arrival times (mean 300 seconds)\""},
		{"harvested load", "21% of all cores", "L302 \"improves the average CPU utilization from 33% to 54%\" (the testbed's harvested work)"},
		{"job scale", "lengths and widths x sqrt(load x cores x 300 s / mean job work)", "L275 \"multiply their lengths and container usage by a scaling factor\"; the factor is not given, so it is derived to make the L254 rate carry the L302 load"},
		{"job shapes", "TPC-DS-like chains; the widest stage up to 469 tasks", "L146 q19 \"a maximum of 469 concurrent containers\"; the rest of the mix is ours (TPCDSMix)"},
		{"job types", "thresholds split from the workload and the preferred classes' room", "L140 \"based on the historical distribution of job lengths and the current computational capacity of each preferred tenant class\" (jobtype.Split)"},
		{"classification", "FFT patterns + k-means over the history window, once before the span", "L129-131; L281 \"once per day\" (classes are not recomputed during the span: synthetic tenants are stationary)"},
		{"history window", "30 days", "L87 \"use the utilization of this average server for one month\""},
		{"span", "30 days", "L273 \"we simulate each datacenter for one month\""},
		{"utilisation sweep", "linear x f saturating at 100%; root u^(1/f)", "L271 \"multiplying the CPU utilization time series by a constant factor and saturating at 100%\"; L272 \"n th -root functions\""},
		{"runs per point", "5 seeds: mean, min, max", "L317 \"the average of five runs ... from the minimum average to the maximum average\""},
		{"memory", "not simulated", "L85 \"for simplicity we focus on the CPU\""},
	}}
}

// Production is the production preset's configuration.
func Production() Config { return ProductionPreset().Config }

// ProductionPreset keeps the paper's workload but runs it as Harvest runs
// on Nomad today: the driver's default reserve and admission margin,
// Nomad's batch placement, one allocation per task.
func ProductionPreset() Preset {
	const cores = 16
	reserve, err := guard.ParseAmount(guard.DefaultReserveCPU, cores)
	if err != nil {
		panic(err) // the default is a constant that parses
	}
	p := PaperPreset()
	c := p.Config
	c.Cores, c.Reserve = cores, reserve
	c.AdmitMargin = guard.DefaultHysteresis().AdmitMargin.CPU
	c.Placement, c.Unlabelled, c.Room = Binpack2, Binpack2, RoomReserve
	c.ContainerReuse, c.LostWork = false, LostTask
	return Preset{Name: "production", Config: c, Seeds: p.Seeds, HistoryDays: p.HistoryDays, Params: []Param{
		{"cores per server", fmt.Sprint(cores), "a common server size today (the paper's 12 in -preset paper)"},
		{"reserve", fmt.Sprintf("%.2f cores (%s)", reserve, guard.DefaultReserveCPU), "the driver's default reserve_cpu (driver/guard.DefaultReserveCPU)"},
		{"admission margin", fmt.Sprintf("%g core", c.AdmitMargin), "the driver's default admission margin (driver/guard.DefaultHysteresis)"},
		{"placement", "best of two feasible servers by binpack, labelled or not", "Nomad's batch scheduler (two candidates, binpack scoring)"},
		{"class room", "what the driver would admit: cores - rounded level - reserve - margin - harvested work there", "the live placer's (classify.ServerRoom): on Nomad the driver refuses a start that would break the reserve, so Algorithm 1's fit must count room the driver would admit"},
		{"containers", "one allocation per task", "Nomad runs each task group instance as an allocation; nothing reuses it"},
		{"lost work on a kill", "the running task", "an allocation runs one task"},
		{"no class", "run at once, default placement", "the admission proxy writes no class constraint when Algorithm 1 picks none"},
		{"everything else", "as -preset paper", "workload, arrivals, sweep, runs per point"},
	}}
}
