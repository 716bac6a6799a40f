package declare

// The checks the declarations, the policy document and the placer's
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
	"slices"
)

// JobTypes and Patterns are the keys of Algorithm 1's weights: the
// placer's job types (placer/jobtype) and utilisation patterns
// (placer/classify), spelled out here so that the driver, which imports
// neither, checks a policy document as the placer does (a placer test keeps
// them equal).
var (
	JobTypes = []string{"short", "medium", "long"}
	Patterns = []string{"periodic", "constant", "unpredictable"}
)

// DecodeStrict decodes exactly one JSON object into v, refusing unknown
// fields and anything after the object.
func DecodeStrict(data []byte, v any) error {
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

// NonNegative refuses a set number below zero (-0 included) or NaN.
func NonNegative(name string, v *float64) error {
	if v != nil && (math.Signbit(*v) || math.IsNaN(*v)) {
		return fmt.Errorf("%s %g: want a number >= 0", name, *v)
	}
	return nil
}

// CheckThresholds checks classifier thresholds (nil: not set); prefix names
// their block in errors ("classify." for the placer's file, "" for the
// policy document).
func CheckThresholds(prefix string, periodicStrength, constantSD, classSpread *float64, maxClasses *int) error {
	for _, s := range []struct {
		name string
		v    *float64
	}{{"periodic_strength", periodicStrength}, {"constant_sd", constantSD}, {"class_spread", classSpread}} {
		if err := NonNegative(prefix+s.name, s.v); err != nil {
			return err
		}
	}
	if p := maxClasses; p != nil && *p < 1 {
		return fmt.Errorf("%smax_classes must be at least 1, got %d", prefix, *p)
	}
	return nil
}

// ValidateWeights refuses job types and patterns Algorithm 1 does not know
// (their weight would silently never apply) and negative weights; what
// names the setting in errors.
func ValidateWeights(what string, w map[string]map[string]float64) error {
	for _, typ := range slices.Sorted(maps.Keys(w)) {
		if !slices.Contains(JobTypes, typ) {
			return fmt.Errorf("%s: unknown job type %q: want short, medium or long", what, typ)
		}
		for _, pat := range slices.Sorted(maps.Keys(w[typ])) {
			if !slices.Contains(Patterns, pat) {
				return fmt.Errorf("%s.%s: unknown pattern %q: want periodic, constant or unpredictable", what, typ, pat)
			}
			v := w[typ][pat]
			if err := NonNegative(what+"."+typ+"."+pat, &v); err != nil {
				return err
			}
		}
	}
	return nil
}
