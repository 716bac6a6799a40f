package declare

import "fmt"

// PolicyName is where the placer's policy document lives under Harvest's
// KV prefix (apart from the history's keys).
const PolicyName = "declarations/policy"

// Policy is the policy document: the body of the placer's PUT /v1/policy
// and what GET returns. Every field is optional; a field left out keeps the
// placer's configuration file's value (or, for reserves, declares none). It
// is stored as given: no defaults are filled in.
type Policy struct {
	PeriodicStrength *float64 `json:"periodic_strength,omitempty"`
	ConstantSD       *float64 `json:"constant_sd,omitempty"`
	ClassSpread      *float64 `json:"class_spread,omitempty"`
	MaxClasses       *int     `json:"max_classes,omitempty"`
	// Weights[type][pattern] of Algorithm 1, over the configured ones.
	Weights map[string]map[string]float64 `json:"weights,omitzero"`
	// The reserve of nodes whose tenant declares none (cores, MB as Nomad
	// counts it: MiB).
	ReserveCPU      *float64 `json:"reserve_cpu,omitempty"`
	ReserveMemoryMB *int64   `json:"reserve_memory_mb,omitempty"`
	// Replicas (1-9) and Diversity ("strict" or "degraded") are the blob
	// tier's defaults; the placer only stores them.
	Replicas  *int    `json:"replicas,omitempty"`
	Diversity *string `json:"diversity,omitempty"`
}

// ParsePolicy reads and checks a policy body (strict JSON: no unknown
// field, nothing after the object).
func ParsePolicy(data []byte) (Policy, error) {
	var p Policy
	if err := DecodeStrict(data, &p); err != nil {
		return Policy{}, fmt.Errorf("policy body: %w", err)
	}
	return p, p.Validate()
}

// Validate checks every set field.
func (p Policy) Validate() error {
	if err := CheckThresholds("", p.PeriodicStrength, p.ConstantSD, p.ClassSpread, p.MaxClasses); err != nil {
		return err
	}
	if err := ValidateWeights("weights", p.Weights); err != nil {
		return err
	}
	if err := NonNegative("reserve_cpu", p.ReserveCPU); err != nil {
		return err
	}
	if m := p.ReserveMemoryMB; m != nil && *m < 0 {
		return fmt.Errorf("reserve_memory_mb %d: want a number >= 0", *m)
	}
	if r := p.Replicas; r != nil && (*r < 1 || *r > 9) {
		return fmt.Errorf("replicas %d: want 1 to 9", *r)
	}
	if d := p.Diversity; d != nil && *d != "strict" && *d != "degraded" {
		return fmt.Errorf("diversity %q: want \"strict\" or \"degraded\"", *d)
	}
	return nil
}
