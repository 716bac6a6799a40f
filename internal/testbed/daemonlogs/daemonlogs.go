// Package daemonlogs owns what a testbed run reads from its daemons' logs
// for the report: the lines logged at ERROR that are not the driver's
// refusals, and the placer's escalations by the kind of wait. A run
// counts only the lines logged since it started (hclog's leading
// timestamp), as a cluster's run folder outlives one run.
package daemonlogs

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/agent/strategy/escalator"
)

// ErrorLines counts, per log file written since since, its lines at
// hclog's ERROR level logged since then (a line with no timestamp of its
// own counts) but the harvest driver's refusals, which Nomad's client logs
// as errors and the report counts as refused starts. A cluster's run
// folder, and so its logs, outlive one run, and a run of fewer clients
// leaves the others' logs.
func ErrorLines(files []string, since time.Time) map[string]int {
	unexpected := func(line string) string {
		if strings.Contains(line, "[ERROR]") && !strings.Contains(line, contract.RefusalPrefix) {
			return "error"
		}
		return ""
	}
	out := map[string]int{}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && !fi.ModTime().Before(since) {
			out[filepath.Base(f)] = countLines(f, since, unexpected)["error"]
		}
	}
	return out
}

// Escalations counts the placer's escalations since since, by the kind of
// wait (its log's lines: the escalator's metric counts them by step).
func Escalations(placerLog string, since time.Time) map[string]int {
	n := countLines(placerLog, since, func(line string) string {
		switch {
		case strings.Contains(line, escalator.LogBlocked):
			return "blocked"
		case strings.Contains(line, escalator.LogPartlyPlaced):
			return "partly_placed"
		}
		return ""
	})
	return map[string]int{"blocked": n["blocked"], "partly_placed": n["partly_placed"]}
}

// countLines counts the lines of file logged since since by the kind
// kindOf gives them ("": not counted), in one read of the file.
func countLines(file string, since time.Time, kindOf func(line string) string) map[string]int {
	out := map[string]int{}
	fh, err := os.Open(file)
	if err != nil {
		return out
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if kind := kindOf(sc.Text()); kind != "" && !loggedBefore(sc.Text(), since) {
			out[kind]++
		}
	}
	return out
}

// loggedBefore says whether an hclog line's leading timestamp is before t.
func loggedBefore(line string, t time.Time) bool {
	stamp, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	at, err := time.Parse(time.RFC3339Nano, stamp)
	return err == nil && at.Before(t)
}
