package driver

// The spike check (spike_check, default 50 ms): between the guard's ticks
// the driver peeks at the primary tenant's CPU over the last spike_check
// alone, from the built-in source (usage.Peeker: a file read or two, on
// counters of the peek's own). Its rise above the peeks' mean over the
// interval before the last tick, added to the measurement the cap came
// from, is the primary's CPU now. When two peeks in a row put it at more
// whole cores than that measurement, the guard ticks at once with the
// lesser of the two.
//
// Why: the guard's measurement is the average since its last tick, so a
// spike that begins just after a tick may still round down at the next
// one (it covered only part of the interval), and relief waited for the
// tick after that: up to two guard_intervals. With the check it comes two
// or three peeks after the spike began. Fast to cut, slow to give back: the
// cap rises again only at a regular tick, from the average over a whole
// interval, and the regular tick is pushed a whole interval past an early
// one so that it never averages a sliver. Two peeks rather than one, so
// that a burst of a few milliseconds (a garbage collection) cuts nothing.
// The rise, not the peek itself, counts, so that with a usage plugin (which
// may count the primary differently: a service's own processes, not the
// whole host) the built-in only says when and by how much the load jumped,
// and the plugin's level stays the measurement.
//
// Every peek's window is timed on both sides of its counter read
// (usagesource.ReadCounter): a window whose timing is uncertain by more than
// a tenth of its length is not used (the next peek covers it), and a spike
// counts only the least CPU its readings allow (usage.Peek.Least), so a
// preemption between a counter read and its clock read, which made a 50 ms
// peek of a 0.6-core load read 2 cores on a busy machine, is no spike.

import (
	"errors"
	"time"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/usage"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// minSpikeCheck: shorter windows see the kernel's accounting steps, not the load.
const minSpikeCheck = 10 * time.Millisecond

// spikePeeker is what the spike check peeks at: the source itself when it
// is a built-in, else (a usage plugin) a built-in of the fallback's kind
// of its own; nil when there is none.
func spikePeeker(source usage.Source, plugin bool, kind string, conf map[string]string) usage.Peeker {
	if !plugin {
		p, _ := source.(usage.Peeker)
		return p
	}
	b, err := usage.New(kind, conf)
	if err != nil {
		return nil
	}
	p, _ := b.(usage.Peeker)
	return p
}

// spikeWatch is the spike check's state; only the guard loop touches it.
type spikeWatch struct {
	peeker usage.Peeker // the one the rule's state is of
	rule   guard.Spike
}

// ticked starts the peeks' next interval at a regular tick.
func (w *spikeWatch) ticked() { w.rule.Ticked() }

// spiked peeks once and says whether the guard should tick now, and with
// what CPU for the primary tenant.
func (d *Driver) spiked() (float64, bool) {
	d.mu.Lock()
	peeker, failSafe, primary := d.peeker, d.failSafe, d.primary.CPU
	d.mu.Unlock()
	w := &d.spike
	if peeker != w.peeker { // reconfigured: start again
		*w = spikeWatch{peeker: peeker}
	}
	if peeker == nil || failSafe {
		return 0, false
	}
	peek, err := peeker.PeekCPU(func() float64 { return d.harvestedOver(&d.peekMeter, d.harvestedNow()).CPU })
	if err == nil {
		err = usage.Check(guard.Resources{CPU: peek.Cores})
	}
	if errors.Is(err, usagesource.ErrUncertainTiming) {
		// no window this time: the next peek covers it, and a run of peeks
		// above goes on from there
		d.met.readingsDiscarded.WithLabelValues(windowPeek).Inc()
		return 0, false
	}
	if err != nil {
		w.rule.Failed()
		return 0, false
	}
	base := w.rule.Base()
	cpu, ok := w.rule.Peeked(peek.Cores, peek.Least, primary)
	if ok {
		d.logger.Info("spike check: two peeks above the cores the cap came from; ticking now",
			"least_cores", cpu, "measured_cores", primary, "peek_cores", peek.Cores, "peek_least_cores", peek.Least, "base_cores", base)
	}
	return cpu, ok
}
