package proc

import "github.com/prometheus/procfs"

// HostBusySeconds is the CPU time the whole host has spent busy (every mode
// but idle and iowait) since boot, over all its CPUs.
func HostBusySeconds() (float64, error) {
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

// Children maps every process shown in /proc that has children to their
// PIDs.
func Children() map[int][]int {
	out := map[int][]int{}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return out
	}
	procs, _ := fs.AllProcs()
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			out[st.PPID] = append(out[st.PPID], p.PID)
		}
	}
	return out
}
