package agent

// The checks the tenant declarations, the policy document and the
// configuration file share, in history/declare (strict JSON bodies,
// non-negative numbers, the classifier thresholds and Algorithm 1's
// weights), and what the placer adds to them: bounded request bodies and
// thresholds written into the classifier's settings.

import (
	"io"
	"net/http"

	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/placer/classify"
)

// maxDeclarationBody bounds a declaration or policy body.
const maxDeclarationBody = 64 << 10

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeclarationBody))
}

// classifyThresholds are the classifier settings the classify block and
// the policy document share; nil leaves the setting as it is.
type classifyThresholds struct {
	PeriodicStrength, ConstantSD, ClassSpread *float64
	MaxClasses                                *int
}

// apply checks the settings and writes them over out; prefix names their
// block in errors ("classify." for the file). Nothing is written when a
// setting is refused.
func (t classifyThresholds) apply(out *classify.Config, prefix string) error {
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

// validateWeights refuses job types and patterns Algorithm 1 does not know
// (their weight would silently never apply) and negative weights.
func validateWeights(what string, w map[string]map[string]float64) error {
	return declare.ValidateWeights(what, w)
}
