package localcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
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

// claim is the content of a claim file: which run holds the block.
type claim struct {
	RunDir  string    `json:"run_dir"`
	Owner   int       `json:"owner_pid"` // 0: detached, the cluster outlives its starter
	Created time.Time `json:"created"`
}

func claimPath(dir string, base int) string {
	return filepath.Join(dir, "block-"+strconv.Itoa(base)+".json")
}

// errNoBlock says every block is claimed or busy.
var errNoBlock = errors.New("no free port block")

// claimBlock claims the first block that no other run holds and whose ports
// are all free, by creating its claim file exclusively.
func claimBlock(dir string, c claim) (Block, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Block{}, "", err
	}
	data, err := json.Marshal(c)
	if err != nil {
		return Block{}, "", err
	}
	held, busy := 0, 0
	for base := portRangeStart; base+blockSize <= portRangeEnd; base += blockSize {
		path := claimPath(dir, base)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			held++
			continue
		}
		if err != nil {
			return Block{}, "", err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return Block{}, "", werr
		}
		if err := portsFree(base, base+blockSize); err != nil {
			os.Remove(path)
			busy++
			continue
		}
		return Block{Base: base}, path, nil
	}
	return Block{}, "", fmt.Errorf("%w in %d-%d: %d blocks claimed by other runs (claims in %s), %d in use by other programs; stop a cluster with `make cluster-down`",
		errNoBlock, portRangeStart, portRangeEnd-1, held, dir, busy)
}

// portsFree checks that every port in [from, to) can be bound on 127.0.0.1.
func portsFree(from, to int) error {
	for p := from; p < to; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return err
		}
		l.Close()
	}
	return nil
}

// readClaims lists the claim files in dir.
func readClaims(dir string) (map[string]claim, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "block-*.json"))
	if err != nil {
		return nil, err
	}
	out := make(map[string]claim, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // released meanwhile
		}
		var c claim
		if err := json.Unmarshal(data, &c); err != nil {
			c = claim{} // unreadable: no owner, no run dir; treated as stale
		}
		out[p] = c
	}
	return out, nil
}
