package testbed

import (
	"strings"

	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/internal/proc"
)

// daemonPIDs are the run's long-lived processes by role: the cluster's
// agents, the Nomad clients' plugins (the harvest driver, its usage
// plugin: their children, found now), the placer and the blob front.
func daemonPIDs(st *localcluster.State, extra map[string]int) map[string][]int {
	out := map[string][]int{"consul": {st.ConsulServer.PID}, "nomad server": {st.NomadServer.PID}, "exporter": {st.Exporter.PID}}
	for _, a := range st.ConsulClients {
		out["consul"] = append(out["consul"], a.PID)
	}
	for _, m := range st.MinIO {
		out["minio"] = append(out["minio"], m.PID)
	}
	children := proc.Children()
	for _, c := range st.NomadClients {
		out["nomad clients"] = append(out["nomad clients"], c.PID)
		for _, child := range children[c.PID] {
			if comm, _ := proc.Stat(child); strings.HasPrefix(comm, "harvest-") {
				out["plugins"] = append(out["plugins"], child)
			}
		}
	}
	for role, pid := range extra {
		out[role] = append(out[role], pid)
	}
	return out
}

// onCPUSeconds is each role's time on a CPU (the scheduler's own
// accounting: what the daemons cost, whatever else the host runs).
func onCPUSeconds(pids map[string][]int) map[string]float64 {
	out := map[string]float64{}
	for role, list := range pids {
		for _, pid := range list {
			if pid > 0 {
				on, _ := proc.Schedstat(pid)
				out[role] += on.Seconds()
			}
		}
	}
	return out
}
