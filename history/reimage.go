package history

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Reimage is one disk reimage of one node of a tenant.
type Reimage struct {
	Node string    `json:"node"`
	Time time.Time `json:"time"`
}

func monthOf(t time.Time) string { return t.UTC().Format("2006-01") }

func decodeReimages(key string, b []byte) ([]Reimage, error) {
	var out []Reimage
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, &CorruptError{Key: key, Err: err}
	}
	for i, r := range out {
		if r.Node == "" || r.Time.IsZero() {
			return nil, &CorruptError{Key: key, Err: fmt.Errorf("event %d has no node or time", i)}
		}
	}
	return out, nil
}

// mergeReimages adds events to a month, skipping exact duplicates (so a
// retried import does not count a reimage twice), kept in time order.
func mergeReimages(have, add []Reimage) []Reimage {
	seen := map[Reimage]bool{}
	for _, r := range have {
		seen[Reimage{r.Node, r.Time.UTC()}] = true
	}
	for _, r := range add {
		k := Reimage{r.Node, r.Time.UTC()}
		if !seen[k] {
			seen[k] = true
			have = append(have, k)
		}
	}
	sort.Slice(have, func(i, j int) bool {
		if !have[i].Time.Equal(have[j].Time) {
			return have[i].Time.Before(have[j].Time)
		}
		return have[i].Node < have[j].Node
	})
	return have
}
