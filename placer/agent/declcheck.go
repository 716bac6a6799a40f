package agent

// The checks the tenant declarations, the policy document and the
// configuration file share: strict JSON bodies, non-negative numbers, the
// classifier thresholds and Algorithm 1's weights.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"

	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
)

// maxDeclarationBody bounds a declaration or policy body.
const maxDeclarationBody = 64 << 10

// decodeStrict decodes exactly one JSON object into v, refusing unknown
// fields and anything after the object.
func decodeStrict(data []byte, v any) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("want one JSON object, found more after it")
	}
	return nil
}

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
// block in errors ("classify." for the file).
func (t classifyThresholds) apply(out *classify.Config, prefix string) error {
	for _, s := range []struct {
		name string
		v    *float64
		dst  *float64
	}{{"periodic_strength", t.PeriodicStrength, &out.PeriodicStrength}, {"constant_sd", t.ConstantSD, &out.ConstantSD},
		{"class_spread", t.ClassSpread, &out.ClassSpread}} {
		if err := nonNegative(prefix+s.name, s.v); err != nil {
			return err
		}
		if s.v != nil {
			*s.dst = *s.v
		}
	}
	if p := t.MaxClasses; p != nil {
		if *p < 1 {
			return fmt.Errorf("%smax_classes must be at least 1, got %d", prefix, *p)
		}
		out.MaxClasses = *p
	}
	return nil
}

// nonNegative refuses a set number below zero (-0 included).
func nonNegative(name string, v *float64) error {
	if v != nil && (math.Signbit(*v) || math.IsNaN(*v)) {
		return fmt.Errorf("%s %g: want a number >= 0", name, *v)
	}
	return nil
}

// validateWeights refuses job types and patterns Algorithm 1 does not know
// (their weight would silently never apply) and negative weights.
func validateWeights(what string, w map[string]map[string]float64) error {
	types := []string{jobtype.Short, jobtype.Medium, jobtype.Long}
	patterns := []string{string(classify.Periodic), string(classify.Constant), string(classify.Unpredictable)}
	for _, typ := range slices.Sorted(maps.Keys(w)) {
		if !slices.Contains(types, typ) {
			return fmt.Errorf("%s: unknown job type %q: want short, medium or long", what, typ)
		}
		for _, pat := range slices.Sorted(maps.Keys(w[typ])) {
			if !slices.Contains(patterns, pat) {
				return fmt.Errorf("%s.%s: unknown pattern %q: want periodic, constant or unpredictable", what, typ, pat)
			}
			v := w[typ][pat]
			if err := nonNegative(what+"."+typ+"."+pat, &v); err != nil {
				return err
			}
		}
	}
	return nil
}
