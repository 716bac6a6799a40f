package localcluster

import (
	"fmt"

	"github.com/harvest-platform/harvest/internal/portclaim"
)

// Port blocks sit below Nomad's default dynamic port range (20000-32000), so a
// task's dynamic port never lands on an agent's, and below the kernel's
// ephemeral range (32768+), so an outgoing connection never takes one first.
const (
	portRangeStart = 15000
	portRangeEnd   = 20000
	blockSize      = 100
)

// Block is a claimed range of blockSize ports starting at Base; the layout of
// the cluster's ports inside it is fixed.
type Block struct{ Base int }

type consulPorts struct{ HTTP, SerfLAN, SerfWAN, Server int }
type nomadPorts struct {
	HTTP, RPC, Serf int
	// DynamicMin and DynamicMax bound the ports a client gives tasks: the
	// clients share one host, so each needs its own range, or two of them
	// hand a task the same port and one task answers for both.
	DynamicMin, DynamicMax int
}

// dynamicPorts is how many dynamic ports each client of a block has:
// every block's clients fit in 20000-28400, inside Nomad's default range.
const dynamicPorts = 24

type minioPorts struct{ API, Console int }

func (b Block) consulServer() consulPorts {
	return consulPorts{b.Base, b.Base + 1, b.Base + 2, b.Base + 3}
}

func (b Block) consulClient(i int) consulPorts {
	p := b.Base + 10 + 4*i
	return consulPorts{p, p + 1, p + 2, p + 3}
}

func (b Block) nomadServer() nomadPorts {
	return nomadPorts{HTTP: b.Base + 40, RPC: b.Base + 41, Serf: b.Base + 42}
}

func (b Block) nomadClient(i int) nomadPorts {
	p := b.Base + 50 + 3*i
	low := 20000 + (b.Base-portRangeStart)/blockSize*MaxClients*dynamicPorts + i*dynamicPorts
	return nomadPorts{HTTP: p, RPC: p + 1, Serf: p + 2, DynamicMin: low, DynamicMax: low + dynamicPorts - 1}
}

func (b Block) minio(i int) minioPorts { p := b.Base + 80 + 2*i; return minioPorts{p, p + 1} }

// driverMetrics is client i's harvest driver's metrics port.
func (b Block) driverMetrics(i int) int { return b.Base + 71 + i }

// exporter is the metrics exporter's port (after the MinIO ports, before
// the spare ones).
func (b Block) exporter() int { return b.Base + 94 }

// claimBlock claims the first block of the local clusters' range that no
// other run holds and whose ports are all free.
func claimBlock(dir string, c portclaim.Claim) (Block, string, error) {
	base, path, err := portclaim.Range{Start: portRangeStart, End: portRangeEnd, Size: blockSize}.Take(dir, c)
	if err != nil {
		return Block{}, "", fmt.Errorf("%w; stop a cluster with `make cluster-down`", err)
	}
	return Block{Base: base}, path, nil
}
