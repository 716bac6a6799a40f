package usage

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/harvest-platform/harvest/driver/guard"
)

// Proc measures the whole host from /proc/stat and /proc/meminfo.
type Proc struct {
	root     string // "/proc", or a fake in tests
	capacity guard.Resources

	mu                sync.Mutex
	lastBusy, lastAll uint64
	peekBusy, peekAll uint64 // PeekCPU's own window
}

var (
	_ Source = (*Proc)(nil)
	_ Peeker = (*Proc)(nil)
)

// NewProc reads the host's capacity (CPUs and MemTotal) from root.
func NewProc(root string) (*Proc, error) {
	p := &Proc{root: root}
	mem, err := p.meminfo()
	if err != nil {
		return nil, err
	}
	p.capacity = guard.Resources{CPU: float64(runtime.NumCPU()), MemoryMiB: mem["MemTotal"] / 1024}
	if p.lastBusy, p.lastAll, err = p.cpuTimes(); err != nil {
		return nil, err
	}
	p.peekBusy, p.peekAll = p.lastBusy, p.lastAll
	return p, nil
}

func (p *Proc) Name() string              { return "proc" }
func (p *Proc) Capacity() guard.Resources { return p.capacity }

// Primary is the host's busy CPU since the previous call (cores) and its
// used memory (MemTotal - MemAvailable), less the harvested tasks' use.
func (p *Proc) Primary(harvested guard.Resources) (guard.Resources, error) {
	cores, err := p.cores(&p.lastBusy, &p.lastAll)
	if err != nil {
		return guard.Resources{}, err
	}
	mem, err := p.meminfo()
	if err != nil {
		return guard.Resources{}, err
	}
	used := (mem["MemTotal"] - mem["MemAvailable"]) / 1024
	return guard.Resources{CPU: max(0, cores-harvested.CPU), MemoryMiB: max(0, used-harvested.MemoryMiB)}, nil
}

// PeekCPU is the host's busy CPU since the previous PeekCPU (cores), less
// the harvested tasks' over the same window. /proc/stat counts in jiffies (10 ms), so
// over a 50 ms window it is good to about a fifth of a core per CPU.
//
// Its window is timed by the counters themselves (busy over all jiffies of
// every CPU), not by a clock, so a late read cannot skew it: Least is Cores.
func (p *Proc) PeekCPU(harvestedCPU func() float64) (Peek, error) {
	cores, err := p.cores(&p.peekBusy, &p.peekAll)
	if err != nil {
		return Peek{}, err
	}
	v := max(0, cores-harvestedCPU())
	return Peek{Cores: v, Least: v}, nil
}

// cores is the host's busy CPU since the counters a window last read, which
// it moves to now.
func (p *Proc) cores(lastBusy, lastAll *uint64) (float64, error) {
	busy, all, err := p.cpuTimes()
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	dBusy, dAll, back := busy-*lastBusy, all-*lastAll, busy < *lastBusy || all < *lastAll
	*lastBusy, *lastAll = busy, all
	p.mu.Unlock()
	if back {
		return 0, fmt.Errorf("%s/stat: CPU counters went backwards; measuring from here", p.root)
	}
	if dAll == 0 {
		return 0, nil
	}
	return float64(dBusy) / float64(dAll) * p.capacity.CPU, nil
}

// cpuTimes returns busy and total jiffies from the aggregate cpu line.
func (p *Proc) cpuTimes() (busy, all uint64, err error) {
	data, err := os.ReadFile(filepath.Join(p.root, "stat"))
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("%s/stat: no aggregate cpu line", p.root)
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s/stat: field %d: %w", p.root, i+1, err)
		}
		all += v
		if i != 3 && i != 4 { // idle and iowait are not busy
			busy += v
		}
	}
	return busy, all, nil
}

func (p *Proc) meminfo() (map[string]float64, error) {
	f, err := os.Open(filepath.Join(p.root, "meminfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		if n, err := strconv.ParseFloat(fields[0], 64); err == nil {
			out[k] = n // kB
		}
	}
	if out["MemTotal"] == 0 {
		return nil, fmt.Errorf("%s/meminfo: no MemTotal", p.root)
	}
	if _, ok := out["MemAvailable"]; !ok {
		return nil, fmt.Errorf("%s/meminfo: no MemAvailable", p.root)
	}
	return out, sc.Err()
}
