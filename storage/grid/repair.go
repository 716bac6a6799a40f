package grid

// RepairRisk is how likely an object is to be lost before its repair
// completes, up to a constant factor, from the storage nodes its surviving
// replicas are on: it is lost only if every survivor is reimaged first, so
// the chance is about the product of their tenants' reimage rates (per
// server per month). A node the grid does not know counts at the highest
// rate it knows: nothing vouches for it.
func (g *Grid) RepairRisk(survivors []string) float64 {
	risk := 1.0
	for _, id := range survivors {
		rate := g.maxRate
		if n, ok := g.nodes[id]; ok {
			if t, ok := g.tenant[n.Tenant]; ok {
				rate = t.ReimageRate
			}
		}
		risk *= rate
	}
	return risk
}

// RepairFirst orders two objects' repairs: fewest surviving replicas first,
// as HDFS's under-replication queues do (the paper's setting), and among
// equals the one at the higher RepairRisk.
func RepairFirst(aLeft int, aRisk float64, bLeft int, bRisk float64) bool {
	if aLeft != bLeft {
		return aLeft < bLeft
	}
	return aRisk > bRisk
}
