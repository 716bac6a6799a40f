package csvfmt

import (
	"bytes"
	"math"
	"testing"
)

// FuzzParseLong: any input either parses into in-range values or fails
// with an error; it never panics.
func FuzzParseLong(f *testing.F) {
	f.Add([]byte("tenant,timestamp,cpu_percent\na/b,2026-11-01T00:00:00Z,5\n"))
	f.Add([]byte("tenant,timestamp,cpu_percent\na/b,1,NaN\n"))
	f.Add([]byte("\x1f\x8b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		series, _, err := ParseLong(bytes.NewReader(data), LongOptions{})
		if err != nil {
			return
		}
		for id, s := range series {
			if id.Validate() != nil {
				t.Fatalf("invalid tenant %q accepted", id)
			}
			for _, v := range s.Values {
				if !math.IsNaN(v) && (v < 0 || v > 100) {
					t.Fatalf("value %v out of range accepted", v)
				}
			}
		}
	})
}

// FuzzParseAzure: the same promise for the Azure layout.
func FuzzParseAzure(f *testing.F) {
	f.Add([]byte("\"\",\"7 24\"\n1,5\n2,6\n"))
	f.Add([]byte("\"\",\"7\",\"8\"\n1,5,NA\n2,6,7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vms, err := ParseAzure(bytes.NewReader(data), start)
		if err != nil {
			return
		}
		for _, vm := range vms {
			for _, v := range vm.Series.Values {
				if !math.IsNaN(v) && (v < 0 || v > 100) {
					t.Fatalf("value %v out of range accepted", v)
				}
			}
		}
	})
}

// FuzzParseReimages: any input either parses into valid tenants, non-empty
// nodes and set times, or fails with an error; it never panics.
func FuzzParseReimages(f *testing.F) {
	f.Add([]byte("tenant,node,timestamp\na/b,n1,2026-11-01T00:00:00Z\n"))
	f.Add([]byte("tenant,node,timestamp\na/b,,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := ParseReimages(bytes.NewReader(data))
		if err != nil {
			return
		}
		for id, evs := range events {
			if id.Validate() != nil {
				t.Fatalf("invalid tenant %q accepted", id)
			}
			for _, e := range evs {
				if e.Node == "" || e.Time.IsZero() {
					t.Fatalf("event %+v accepted", e)
				}
			}
		}
	})
}

// FuzzParseInventory: the same promise for the inventory, and no node
// listed twice.
func FuzzParseInventory(f *testing.F) {
	f.Add([]byte("tenant,node,rack\na/b,n1,r1\na/b,n2,\n"))
	f.Add([]byte("tenant,node,rack\na/b,n1,r1\nc/d,n1,r2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := ParseInventory(bytes.NewReader(data))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, n := range inv {
			if n.Tenant.Validate() != nil || n.Node == "" || seen[n.Node] {
				t.Fatalf("node %+v accepted", n)
			}
			seen[n.Node] = true
		}
	})
}

// FuzzParseLifetimes: the same promise for the disk log: every accepted
// disk has a valid tenant, a node, a unique disk name, a life that does not
// run backwards and a failure within it; a node keeps one tenant.
func FuzzParseLifetimes(f *testing.F) {
	f.Add([]byte("tenant,node,rack,disk,first_seen,last_seen,failed\na/b,n1,r1,d1,2026-01-01T00:00:00Z,2026-06-01T00:00:00Z,\n" +
		"a/b,n1,r1,d2,2026-06-02T00:00:00Z,2026-12-01T00:00:00Z,2026-12-01T00:00:00Z\n"))
	f.Add([]byte("tenant,node,rack,disk,first_seen,last_seen,failed\na/b,n1,,d1,100,50,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		disks, err := ParseLifetimes(bytes.NewReader(data))
		if err != nil {
			return
		}
		seen, tenant := map[string]bool{}, map[string]string{}
		for _, d := range disks {
			if d.Tenant.Validate() != nil || d.Node == "" || d.Disk == "" || seen[d.Disk] || d.LastSeen.Before(d.FirstSeen) ||
				(!d.Failed.IsZero() && d.Failed.Before(d.FirstSeen)) {
				t.Fatalf("disk %+v accepted", d)
			}
			if was, ok := tenant[d.Node]; ok && was != d.Tenant.String() {
				t.Fatalf("node %s accepted under %s and %s", d.Node, was, d.Tenant)
			}
			seen[d.Disk], tenant[d.Node] = true, d.Tenant.String()
		}
	})
}
