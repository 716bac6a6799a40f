package api

import (
	"encoding/json"
	"testing"
	"time"
)

// A class table stored by the placer before the wire types moved here
// (unclassified tenants carried their zero features; the classifier's
// class embedded) still reads: the stored document survives an upgrade.
func TestClassTableReadsThePreviousStoredFormat(t *testing.T) {
	old := `{"generated":"2026-11-25T00:00:00Z","classes":[{"name":"periodic-1","pattern":"periodic","average":31.5,
	"peak":70,"current":40,"tenants":["a/x"],"nodes":null,"survival":[{"length":120000000000,"probability":0.98,"tasks":12},
	{"length":86400000000000,"probability":null,"tasks":0}],"survival_by_job_type":{"short":{"length":173000000000,
	"probability":0.97}},"survival_server":{"cores":16,"reserve_cores":5,"nodes":3}}],
	"unclassified":[{"tenant":"b/y","unclassified_reason":"too little history","features":{"Mean":0,"Peak":0,"SD":0,
	"Current":0,"Strength":0,"Period":0,"DailyAmp":0,"DailyPhase":0,"Observed":0}}],"node_counts":{"periodic-1":3}}`
	var table ClassTable
	if err := json.Unmarshal([]byte(old), &table); err != nil {
		t.Fatal(err)
	}
	c := table.Classes[0]
	if c.Name != "periodic-1" || c.Pattern != "periodic" || c.Peak != 70 || len(c.Tenants) != 1 ||
		c.Survival[0].Probability == nil || *c.Survival[0].Probability != 0.98 || c.Survival[1].Probability != nil ||
		*c.SurvivalByJobType["short"].Probability != 0.97 || c.SurvivalByJobType["short"].Length != 173*time.Second ||
		*c.SurvivalServer != (SurvivalServer{Cores: 16, Reserve: 5, Nodes: 3}) {
		t.Fatalf("class %+v", c)
	}
	if len(table.Unclassified) != 1 || table.Unclassified[0] != (Unclassified{Tenant: "b/y", Reason: "too little history"}) ||
		table.NodeCounts["periodic-1"] != 3 {
		t.Fatalf("table %+v", table)
	}
}
