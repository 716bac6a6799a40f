package config

import (
	"strings"
	"testing"
	"time"
)

func TestStrategyBlocksDefaultToTheirSources(t *testing.T) {
	cfg, err := load(writeConfig(t, `
packing    { enabled = true }
partition  {
  enabled  = true
  max_size = 3
}
greylist   {
  enabled   = true
  threshold = 2
}
escalation {
  enabled = true
  delay   = "10s"
}
`))
	if err != nil {
		t.Fatal(err)
	}
	set := decoded(t, cfg)
	ps := set.Packing
	if !cfg.Packing.Enabled || ps.Rule.HighThreshold != 0.6 || ps.Rule.MinNodes != 5 || ps.Interval != 10*time.Second || ps.ReleaseAfter != 10*time.Minute {
		t.Fatalf("packing %+v", ps)
	}
	hc, _ := cfg.Partition.Rule(20)
	if hc.Window != 5 || hc.Threshold != 0.1 || hc.Grow != 2 || hc.Shrink != 2 || hc.MaxPartition != 3 || hc.InitialCutoff != 90*time.Second {
		t.Fatalf("partition %+v", hc)
	}
	if g, e := set.Greylist, set.Escalation; g.Threshold != 2 || g.Reset != 4*time.Hour || e.Delay != 10*time.Second || e.ExtraClasses != 1 {
		t.Fatalf("greylist %+v, escalation %+v", g, e)
	}
	off, _ := load(writeConfig(t, ``))
	if off.Packing.Enabled || off.Partition.Enabled || off.Greylist.Enabled || off.Escalation.Enabled {
		t.Fatalf("strategies must be off by default: %+v", off)
	}
}

func TestStrategyBlocksRejectBadValues(t *testing.T) {
	for src, want := range map[string]string{
		`packing { high_threshold = 1.5 }`:                  "packing.high_threshold 1.5",
		`packing { interval = "often" }`:                    `packing.interval "often"`,
		"partition {\n min_size = 4\n max_size = 2\n}":      "min_size 4 above max_size 2",
		`partition { window = 0 }`:                          "partition.window 0",
		`greylist { threshold = 0 }`:                        "greylist.threshold 0",
		`greylist { reset = "-1h" }`:                        `greylist.reset "-1h"`,
		`escalation { delay = "soon" }`:                     `escalation.delay "soon"`,
		`escalation { extra_classes = 0 }`:                  "escalation.extra_classes 0",
		"escalation {\n enabled = true\n dealy = \"1s\"\n}": `An argument named "dealy"`,
	} {
		_, err := load(writeConfig(t, src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", src, err, want)
		}
	}
}
