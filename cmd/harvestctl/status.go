package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/command"
)

// NodeStanding is one row of `harvestctl status`: a Nomad client that runs
// the harvest driver, its primary tenant and what is harvested on it.
type NodeStanding struct {
	Node    string `json:"node"`
	Status  string `json:"status"`
	Tenant  string `json:"tenant"`
	Class   string `json:"class"`
	Pattern string `json:"pattern"`
	// PrimaryPercent is the primary tenant's CPU (percent of the server) as
	// the node's driver last published it in its busy flag (every 30 s), or,
	// when that is older than two minutes, the tenant's last history slot;
	// absent when neither. PrimarySource says which ("driver", "history").
	PrimaryPercent *float64  `json:"primary_cpu_percent,omitempty"`
	PrimaryAt      time.Time `json:"primary_at"`
	PrimarySource  string    `json:"primary_source,omitempty"`
	// The reserve and capacity as the node's driver fingerprints them.
	ReserveCores    float64 `json:"reserve_cores"`
	ReserveMiB      int64   `json:"reserve_mib"`
	CapacityCores   float64 `json:"capacity_cores"`
	HarvestedMHz    int     `json:"harvested_cpu_mhz"` // allocated to running harvest tasks
	HarvestedMB     int     `json:"harvested_memory_mb"`
	HarvestedTasks  int     `json:"harvested_tasks"`
	EvictionsHour   int     `json:"evictions_last_hour"`
	Healthy         bool    `json:"driver_healthy"`
	Greylisted      bool    `json:"greylisted"`
	Busy            *bool   `json:"busy,omitempty"` // the driver's busy flag (storage reads go elsewhere), when fresh
	StorageUsed     *int64  `json:"storage_used_bytes,omitempty"`
	StorageCapacity *int64  `json:"storage_capacity_bytes,omitempty"`
}

// clusterStatus reads every node's standing from Nomad, the history in
// Consul and, when blob is not nil, the blob tier's node status.
func clusterStatus(ctx context.Context, nomad *nomadapi.Client, store *history.Store, blob *api.BlobStatus, now time.Time) ([]NodeStanding, error) {
	q := (&nomadapi.QueryOptions{}).WithContext(ctx)
	stubs, _, err := nomad.Nodes().List(q)
	if err != nil {
		return nil, err
	}
	storage := map[string]api.BlobNode{}
	if blob != nil {
		for _, n := range blob.Nodes {
			storage[n.ID] = n
		}
	}
	flags := map[string]contract.BusyFlag{}
	if store != nil {
		docs, err := store.ListDocuments(ctx, contract.BusyDir)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			var f contract.BusyFlag
			if d.Decode(&f) == nil && now.Sub(f.Updated) <= contract.BusyFlagMaxAge {
				flags[strings.TrimPrefix(d.Name, contract.BusyDir)] = f
			}
		}
	}
	var out []NodeStanding
	for _, stub := range stubs {
		node, _, err := nomad.Nodes().Info(stub.ID, q)
		if err != nil {
			return nil, err
		}
		info, ok := node.Drivers[contract.DriverName]
		if !ok {
			continue
		}
		s := NodeStanding{Node: node.Name, Status: node.Status, Tenant: node.Meta[contract.NodeTenant],
			Class: node.Meta[contract.NodeClass], Pattern: node.Meta[contract.NodePattern], Healthy: info.Healthy,
			Greylisted: node.Meta[contract.NodeGreylisted] == contract.GreylistedTrue}
		s.ReserveCores = floatAttr(info.Attributes[contract.AttrReserveCores])
		s.ReserveMiB = int64(floatAttr(info.Attributes[contract.AttrReserveMemory]))
		s.CapacityCores = floatAttr(info.Attributes[contract.AttrCapacityCores])
		if f, ok := flags[node.Name]; ok {
			busy, pct := f.Busy, f.PrimaryCPU
			s.PrimaryPercent, s.PrimaryAt, s.PrimarySource, s.Busy = &pct, f.Updated, "driver", &busy
		} else if t, err := history.ParseTenantID(s.Tenant); err == nil && store != nil {
			// no fresh flag (a driver cut off from Consul, say): the history
			series, err := store.Series(ctx, t, now.Add(-time.Hour), now)
			if err != nil {
				return nil, err
			}
			if pct, at := lastSample(series); !math.IsNaN(pct) {
				s.PrimaryPercent, s.PrimaryAt, s.PrimarySource = &pct, at, "history"
			}
		}
		allocs, _, err := nomad.Nodes().Allocations(stub.ID, q)
		if err != nil {
			return nil, err
		}
		harvestedOn(&s, allocs, now)
		if st, ok := storage[node.Name]; ok {
			used, capacity := st.Used, st.Capacity
			s.StorageUsed, s.StorageCapacity = &used, &capacity
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// floatAttr reads a fingerprint attribute's number ("1.5", "512 MiB"); 0
// when the driver does not fingerprint it.
func floatAttr(v string) float64 {
	var f float64
	if _, err := fmt.Sscan(v, &f); err != nil {
		return 0
	}
	return f
}

// lastSample is a series' last observed slot.
func lastSample(s history.Series) (float64, time.Time) {
	for i := len(s.Values) - 1; i >= 0; i-- {
		if !math.IsNaN(s.Values[i]) {
			return s.Values[i], s.Start.Add(time.Duration(i) * history.Slot)
		}
	}
	return math.NaN(), time.Time{}
}

// harvestedOn adds up a node's running harvest tasks and counts the
// driver's evictions within the hour before now.
func harvestedOn(s *NodeStanding, allocs []*nomadapi.Allocation, now time.Time) {
	for _, a := range allocs {
		for task, st := range a.TaskStates {
			for _, ev := range st.Events {
				if contract.IsEviction(ev.Details) && now.Sub(time.Unix(0, ev.Time)) <= time.Hour {
					s.EvictionsHour++
				}
			}
			if st.State != "running" || a.Job == nil {
				continue
			}
			for _, g := range a.Job.TaskGroups {
				if deref(g.Name) != a.TaskGroup {
					continue
				}
				for _, t := range g.Tasks {
					if t.Name == task && t.Driver == contract.DriverName && t.Resources != nil {
						s.HarvestedTasks++
						s.HarvestedMHz += derefInt(t.Resources.CPU)
						s.HarvestedMB += derefInt(t.Resources.MemoryMB)
					}
				}
			}
		}
	}
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// printStatus writes the table for people, or JSON.
func printStatus(w io.Writer, rows []NodeStanding, blobNote string, asJSON bool) error {
	if asJSON {
		return command.PrintJSON(w, rows)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATUS\tTENANT\tCLASS\tPATTERN\tPRIMARY CPU\tRESERVE\tHARVESTED\tTASKS\tEVICTIONS 1H\tGREYLISTED\tBUSY\tSTORAGE MiB")
	for _, r := range rows {
		primary := "-"
		if r.PrimaryPercent != nil {
			primary = fmt.Sprintf("%.0f%% at %s", *r.PrimaryPercent, r.PrimaryAt.Format("15:04:05"))
		}
		status := r.Status
		if !r.Healthy {
			status += " (driver unhealthy)"
		}
		busy, storage := "-", "-"
		if r.Busy != nil {
			busy = fmt.Sprint(*r.Busy)
		}
		if r.StorageUsed != nil {
			storage = fmt.Sprintf("%.1f/%d", float64(*r.StorageUsed)/(1<<20), *r.StorageCapacity>>20)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f cores, %d MiB\t%d MHz, %d MB\t%d\t%d\t%v\t%s\t%s\n", r.Node, status,
			orDash(r.Tenant), orDash(r.Class), orDash(r.Pattern), primary, r.ReserveCores, r.ReserveMiB,
			r.HarvestedMHz, r.HarvestedMB, r.HarvestedTasks, r.EvictionsHour, r.Greylisted, busy, storage)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nPRIMARY CPU: the tenant's share of the server as its driver last published it (else its last 2-minute history slot);")
	fmt.Fprintln(w, "RESERVE: what the node's driver keeps for it; HARVESTED: allocated to running harvest tasks; EVICTIONS: by the driver, in")
	fmt.Fprintln(w, "the last hour; BUSY: the driver's flag (the blob tier reads from other replicas); STORAGE: the blob tier's.")
	if blobNote != "" {
		fmt.Fprintln(w, blobNote)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
