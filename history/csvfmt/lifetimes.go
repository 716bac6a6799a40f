package csvfmt

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
)

// DiskLifetime is one disk of a datacenter's disk log (the shape of
// Backblaze's drive stats, per disk rather than per day): the server and
// tenant it served, when it was first and last seen, and when it failed.
type DiskLifetime struct {
	Tenant    history.TenantID
	Node      string
	Rack      string // "" when not known
	Disk      string // serial or any unique name
	FirstSeen time.Time
	LastSeen  time.Time
	Failed    time.Time // zero when the disk did not fail (still in service, or retired whole)
}

// ParseLifetimes reads tenant,node,rack,disk,first_seen,last_seen,failed
// rows (rack and failed may be empty; times RFC 3339 or Unix seconds): every
// data disk a server had, so that the log is also the inventory. A disk
// listed twice, a disk last seen before it was first seen, a failure
// outside the disk's life (a day's slack after the last sighting, as daily
// logs note a failure the day after), and a node listed under two tenants
// are errors.
func ParseLifetimes(r io.Reader) ([]DiskLifetime, error) {
	var out []DiskLifetime
	seen := map[string]int{}
	tenantOf := map[string]history.TenantID{}
	err := tenantNodeFields(r, []string{"rack", "disk", "first_seen", "last_seen", "failed"},
		func(line int, id history.TenantID, node string, f []string) error {
			d := DiskLifetime{Tenant: id, Node: node, Rack: strings.TrimSpace(f[0]), Disk: strings.TrimSpace(f[1])}
			if d.Disk == "" {
				return errors.New("empty disk")
			}
			if first, dup := seen[d.Disk]; dup {
				return fmt.Errorf("disk %q already listed on line %d", d.Disk, first)
			}
			if t, ok := tenantOf[node]; ok && t != id {
				return fmt.Errorf("node %q is listed under tenant %s too", node, t)
			}
			var err error
			if d.FirstSeen, err = ParseTime(strings.TrimSpace(f[2])); err != nil {
				return fmt.Errorf("first_seen: %w", err)
			}
			if d.LastSeen, err = ParseTime(strings.TrimSpace(f[3])); err != nil {
				return fmt.Errorf("last_seen: %w", err)
			}
			if d.LastSeen.Before(d.FirstSeen) {
				return fmt.Errorf("disk %q last seen %s, before it was first seen %s", d.Disk,
					d.LastSeen.Format(time.RFC3339), d.FirstSeen.Format(time.RFC3339))
			}
			if v := strings.TrimSpace(f[4]); v != "" {
				if d.Failed, err = ParseTime(v); err != nil {
					return fmt.Errorf("failed: %w", err)
				}
				if d.Failed.Before(d.FirstSeen) || d.Failed.After(d.LastSeen.Add(24*time.Hour)) {
					return fmt.Errorf("disk %q failed %s, outside its life %s to %s", d.Disk, d.Failed.Format(time.RFC3339),
						d.FirstSeen.Format(time.RFC3339), d.LastSeen.Format(time.RFC3339))
				}
			}
			seen[d.Disk], tenantOf[node] = line, id
			out = append(out, d)
			return nil
		})
	switch {
	case err != nil:
		return nil, err
	case len(out) == 0:
		return nil, errors.New("the disk log lists no disk")
	}
	return out, nil
}
