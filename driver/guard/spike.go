package guard

// SpikePeeks is how many peeks in a row above the cores the cap came from
// make a spike: two, so that a burst of a few milliseconds (a garbage
// collection) cuts nothing.
const SpikePeeks = 2

// Spike is the spike check's rule, between the guard's ticks (the driver's
// spike.go says why and how it peeks). A peek's rise above the peeks' mean
// over the interval before the last tick, added to the measurement the cap
// came from, is the primary's CPU now; SpikePeeks peeks in a row that put it
// at more whole cores than that measurement are a spike, and the guard
// ticks at once with the least of them. The rise, not the peek, counts, so
// a peeked source that counts the primary differently from the measured
// one only says when and by how much the load jumped. Pure and clock-free;
// the zero value waits for its first interval.
type Spike struct {
	sum   float64 // peeks since the last tick, cores
	n     int
	base  float64 // the peeks' level at the last tick: their mean over the interval before it
	known bool    // base is
	run   int     // peeks in a row above the measurement the cap came from
	least float64 // the least primary they put it at, cores
}

// Ticked starts the peeks' next interval at a regular tick.
func (s *Spike) Ticked() {
	if s.n > 0 {
		s.base, s.known = s.sum/float64(s.n), true
	}
	s.sum, s.n = 0, 0
}

// Failed ends a run of peeks above: a peek that could not be read is no
// evidence of a spike.
func (s *Spike) Failed() { s.run = 0 }

// Base is the peeks' level the rise is counted from, cores.
func (s *Spike) Base() float64 { return s.base }

// Peeked takes one peek, cores as read and least as the least its readings
// allow (a window's timing is uncertain; only the least counts as evidence),
// against measured, the primary's CPU the cap came from. It says whether the
// guard should tick now, and with what CPU for the primary.
func (s *Spike) Peeked(cores, least, measured float64) (float64, bool) {
	s.sum, s.n = s.sum+cores, s.n+1
	now := measured + least - s.base
	if !s.known || wholeCores(now) <= wholeCores(measured) {
		s.run = 0
		return 0, false
	}
	if s.run == 0 || now < s.least {
		s.least = now
	}
	if s.run++; s.run < SpikePeeks {
		return 0, false
	}
	// the early tick sets the cap from least: the peeks' level that stands
	// for it is the new base, and the next interval starts now
	s.base += s.least - measured
	s.sum, s.n, s.run = 0, 0, 0
	return s.least, true
}

func wholeCores(cpu float64) float64 { return RoundUp(Resources{CPU: cpu}).CPU }
