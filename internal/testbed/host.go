package testbed

import "github.com/prometheus/procfs"

// hostBusySeconds is the CPU time the whole host has spent busy (every
// mode but idle and iowait) since boot: the testbed's own cost, read at
// the span's start and end, is what the 2-core host can give Nomad's
// per-allocation work.
func hostBusySeconds() (float64, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, err
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, err
	}
	c := st.CPUTotal
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal, nil
}
