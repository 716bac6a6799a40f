// Package portclaim hands out blocks of TCP ports on 127.0.0.1 to runs
// that share one machine (local clusters, benchmarks, tests side by side).
// A run claims a block by creating its claim file exclusively in a shared
// folder, and only when every port of the block binds; the claim names the
// run's folder and owner, so a later run can find and reap a stale one.
package portclaim

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

// Claim is the content of a claim file: which run holds the block.
type Claim struct {
	RunDir  string    `json:"run_dir"`
	Owner   int       `json:"owner_pid"` // 0: detached, the cluster outlives its starter
	Created time.Time `json:"created"`
}

// Path is the claim file of the block at base.
func Path(dir string, base int) string {
	return filepath.Join(dir, "block-"+strconv.Itoa(base)+".json")
}

// ErrNoBlock says every block is claimed or busy.
var ErrNoBlock = errors.New("no free port block")

// Range is where blocks are handed out: [Start, End) in blocks of Size.
type Range struct{ Start, End, Size int }

// Take claims the first block of r that no other run holds and whose ports
// are all free, by creating its claim file exclusively, and returns the
// block's first port and its claim file.
func (r Range) Take(dir string, c Claim) (int, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, "", err
	}
	data, err := json.Marshal(c)
	if err != nil {
		return 0, "", err
	}
	held, busy := 0, 0
	for base := r.Start; base+r.Size <= r.End; base += r.Size {
		path := Path(dir, base)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			held++
			continue
		}
		if err != nil {
			return 0, "", err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return 0, "", werr
		}
		if err := portsFree(base, base+r.Size); err != nil {
			os.Remove(path)
			busy++
			continue
		}
		return base, path, nil
	}
	return 0, "", fmt.Errorf("%w in %d-%d: %d blocks claimed by other runs (claims in %s), %d in use by other programs",
		ErrNoBlock, r.Start, r.End-1, held, dir, busy)
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

// Read lists the claim files in dir, by path.
func Read(dir string) (map[string]Claim, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "block-*.json"))
	if err != nil {
		return nil, err
	}
	out := make(map[string]Claim, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // released meanwhile
		}
		var c Claim
		if err := json.Unmarshal(data, &c); err != nil {
			c = Claim{} // unreadable: no owner, no run dir; treated as stale
		}
		out[p] = c
	}
	return out, nil
}
