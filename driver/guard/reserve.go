package guard

import (
	"fmt"
	"strconv"
	"strings"
)

// Default reserves, as the paper's testbed kept them: a third of the CPU
// and about 31% of memory.
const (
	DefaultReserveCPU    = "33%"
	DefaultReserveMemory = "31%"
)

// ParseAmount reads an amount given as a number ("2", "4096") or a percent
// of capacity ("33%").
func ParseAmount(s string, capacity float64) (float64, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 || v > 100 {
			return 0, fmt.Errorf("%q: want a percent between 0 and 100", s)
		}
		return capacity * v / 100, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q: want a non-negative number or a percent such as \"33%%\"", s)
	}
	if v > capacity {
		return 0, fmt.Errorf("%q is more than the capacity (%.2f)", s, capacity)
	}
	return v, nil
}

// ParseReserve resolves the CPU (cores) and memory (MiB) reserve against a
// capacity.
func ParseReserve(cpu, memory string, capacity Resources) (Resources, error) {
	c, err := ParseAmount(cpu, capacity.CPU)
	if err != nil {
		return Resources{}, fmt.Errorf("reserve_cpu %w", err)
	}
	m, err := ParseAmount(memory, capacity.MemoryMiB)
	if err != nil {
		return Resources{}, fmt.Errorf("reserve_memory %w", err)
	}
	return Resources{c, m}, nil
}
