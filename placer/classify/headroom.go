package classify

import "math"

// JobType is a batch job's length class (Algorithm 1, line 3).
type JobType string

const (
	Short  JobType = "short"
	Medium JobType = "medium"
	Long   JobType = "long"
)

// Headroom is the share of a class's capacity free for a job of type t
// (Section 4.1): a short job needs only what is free now, 1 - current; a
// medium one what stays free on average, 1 - max(average, current); a long
// one what stays free at the peak, 1 - max(peak, current). current is the
// class's utilisation now, in percent (live node stats or latest samples).
func Headroom(t JobType, c Class, current float64) float64 {
	var used float64
	switch t {
	case Short:
		used = current
	case Medium:
		used = math.Max(c.Average, current)
	default:
		used = math.Max(c.Peak, current)
	}
	return math.Max(0, 1-used/100)
}

// Server is one server of a class as its driver sees it now, in cores.
type Server struct {
	Cores   float64 // capacity
	Reserve float64 // kept free for the primary tenant
	Primary float64 // the primary tenant's use now
	// Allocated is what harvested work holds on the server now: what runs,
	// never what waits in a queue for room.
	Allocated float64
}

// ServerRoom is the cores the driver would still admit on s for a job of
// type t if the primary stood at the level Headroom plans for that type
// (its current use for a short job, at least the class's average for a
// medium one, at least its peak for a long one), rounded up to whole cores
// as the driver rounds the primary (history-based-harvesting.txt, Section
// 5: "round them up to the next integer number of cores"). A class's room
// for Algorithm 1 (line 8) is the sum over its servers: a 12-core server
// with a 4-core reserve in a class that peaks at 70% has none for a long
// job, whatever the class's size.
func ServerRoom(t JobType, c Class, s Server) float64 {
	if s.Cores <= 0 {
		return 0
	}
	level := (1 - Headroom(t, c, 100*s.Primary/s.Cores)) * s.Cores
	return math.Max(0, s.Cores-wholeCores(level)-s.Reserve-s.Allocated)
}

// wholeCores rounds up, forgiving the float error of a level computed from
// a percentage (8.000000001 cores is 8).
func wholeCores(c float64) float64 { return math.Ceil(c - 1e-9) }

// PaperRoom is a server's room for a job of type t as the paper defines a
// class's headroom (history-based-harvesting.txt:150-153): the share
// Headroom leaves free, of the whole server, in cores. The server's current
// utilisation is what runs on it, the primary's and the harvested work's
// (L150 "the current average CPU utilization of the servers": a measured
// utilisation counts everything running); nothing is taken off for the
// reserve, and the level is not rounded to whole cores: ServerRoom's
// departures, which predict what the driver would admit.
func PaperRoom(t JobType, c Class, s Server) float64 {
	if s.Cores <= 0 {
		return 0
	}
	return Headroom(t, c, 100*math.Min(s.Cores, s.Primary+s.Allocated)/s.Cores) * s.Cores
}
