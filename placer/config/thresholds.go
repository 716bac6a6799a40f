package config

import (
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/placer/classify"
)

// ClassifyThresholds are the classifier settings the classify block and
// the policy document (placer/agent/declarations) share; nil leaves the
// setting as it is.
type ClassifyThresholds struct {
	PeriodicStrength, ConstantSD, ClassSpread *float64
	MaxClasses                                *int
}

// Apply checks the settings and writes them over out; prefix names their
// block in errors ("classify." for the file). Nothing is written when a
// setting is refused.
func (t ClassifyThresholds) Apply(out *classify.Config, prefix string) error {
	if err := declare.CheckThresholds(prefix, t.PeriodicStrength, t.ConstantSD, t.ClassSpread, t.MaxClasses); err != nil {
		return err
	}
	for _, s := range []struct{ v, dst *float64 }{{t.PeriodicStrength, &out.PeriodicStrength},
		{t.ConstantSD, &out.ConstantSD}, {t.ClassSpread, &out.ClassSpread}} {
		if s.v != nil {
			*s.dst = *s.v
		}
	}
	if p := t.MaxClasses; p != nil {
		out.MaxClasses = *p
	}
	return nil
}
