package schedsim

import (
	"math/rand/v2"
)

// StreamJob is one job of a run's arrival stream: when it arrives (seconds
// into the span), its class in the mix, and its tasks' lengths (seconds)
// stage by stage, each task a one-core container.
type StreamJob struct {
	At     float64     `json:"at"`
	Class  string      `json:"class"`
	Stages [][]float64 `json:"stages"`
}

// Stream returns the jobs a run of cfg receives within its span, in
// arrival order, with the job scale and the arrival rate (per second) the
// run uses: the same random stream loop draws from, so a testbed fed these
// jobs receives exactly the simulator's (the sim's own arrivals are drawn
// the same way whatever the policy).
func Stream(cfg Config) ([]StreamJob, float64, float64, error) {
	s, rate, err := newSim(cfg)
	if err != nil {
		return nil, 0, 0, err
	}
	cfg = s.cfg
	span := cfg.Span.Seconds()
	arrivals := rand.New(rand.NewPCG(cfg.Seed, 0xa77)) // as loop's
	var out []StreamJob
	at := 0.0
	for i := 0; ; i++ {
		if cfg.Arrivals != nil {
			if i >= len(cfg.Arrivals) {
				break
			}
			at = cfg.Arrivals[i]
		} else {
			at += arrivals.ExpFloat64() / rate
		}
		if at >= span {
			break
		}
		spec := cfg.Mix.draw(arrivals).scaled(s.scale, arrivals)
		out = append(out, StreamJob{At: at, Class: spec.class, Stages: spec.stages})
	}
	return out, s.scale, rate, nil
}
