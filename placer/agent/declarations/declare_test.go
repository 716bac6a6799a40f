package declarations

import (
	"slices"
	"testing"

	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
)

// history/declare spells out Algorithm 1's job types and patterns so that
// the driver need not import the placer: they must be the placer's.
func TestDeclareKnowsThePlacersJobTypesAndPatterns(t *testing.T) {
	types := []string{jobtype.Short, jobtype.Medium, jobtype.Long}
	patterns := []string{string(classify.Periodic), string(classify.Constant), string(classify.Unpredictable)}
	if !slices.Equal(declare.JobTypes, types) || !slices.Equal(declare.Patterns, patterns) {
		t.Fatalf("declare has %v and %v, the placer %v and %v", declare.JobTypes, declare.Patterns, types, patterns)
	}
}
