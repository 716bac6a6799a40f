// Package labels decides the dynamic node metadata the placer writes so that
// job constraints can name classes: harvest_class and harvest_pattern on
// every node of a classified tenant, "unclassified" on nodes of tenants
// without (enough) history, and nothing on nodes that are not harvested.
// It is pure: the placer applies the updates through Nomad's API.
package labels

import (
	"maps"
	"slices"
	"sort"

	"github.com/harvest-platform/harvest/contract"
)

// Meta keys the placer owns (their values are the contract's).
const (
	ClassKey     = contract.NodeClass
	PatternKey   = contract.NodePattern
	TenantKey    = contract.NodeTenant
	Unclassified = contract.Unclassified
)

// Node is a Nomad node as the planner needs it: its merged meta.
type Node struct {
	ID, Name string
	Meta     map[string]string
	// Attributes are the node's attributes (the harvest driver's size among
	// them); the planner does not read them, the placer's survival does.
	Attributes map[string]string
}

// Assignment is a tenant's class and pattern.
type Assignment struct{ Class, Pattern string }

// Update is one node's meta change: keys to set and keys to remove.
type Update struct {
	NodeID, NodeName string
	Set              map[string]string
	Unset            []string
}

// Plan returns the updates that bring every node's labels in line with the
// assignments (tenant -> class), in node-name order. Nodes already right get
// no update.
func Plan(nodes []Node, assignments map[string]Assignment) []Update {
	var out []Update
	for _, n := range nodes {
		want := map[string]string{}
		if tenant := n.Meta[TenantKey]; tenant != "" {
			a, ok := assignments[tenant]
			if !ok || a.Class == "" {
				a = Assignment{Class: Unclassified, Pattern: Unclassified}
			}
			want[ClassKey], want[PatternKey] = a.Class, a.Pattern
		}
		u := Update{NodeID: n.ID, NodeName: n.Name, Set: map[string]string{}}
		for _, k := range []string{ClassKey, PatternKey} {
			have, present := n.Meta[k]
			w, wanted := want[k]
			switch {
			case wanted && (!present || have != w):
				u.Set[k] = w
			case !wanted && present:
				u.Unset = append(u.Unset, k) // a stale label on a node no tenant claims
			}
		}
		if len(u.Set) > 0 || len(u.Unset) > 0 {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeName < out[j].NodeName })
	return out
}

// Counts tallies nodes per class label after the updates are applied.
func Counts(nodes []Node, updates []Update) map[string]int {
	out := map[string]int{}
	for class, names := range Members(nodes, updates) {
		out[class] = len(names)
	}
	return out
}

// Members is, for each class label, the names of the nodes that carry it
// once updates are applied, sorted.
func Members(nodes []Node, updates []Update) map[string][]string {
	byID := map[string]Update{}
	for _, u := range updates {
		byID[u.NodeID] = u
	}
	out := map[string][]string{}
	for _, n := range nodes {
		meta := maps.Clone(n.Meta)
		if meta == nil {
			meta = map[string]string{}
		}
		u := byID[n.ID]
		maps.Copy(meta, u.Set)
		for _, k := range u.Unset {
			delete(meta, k)
		}
		if c := meta[ClassKey]; c != "" {
			out[c] = append(out[c], n.Name)
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}
