package nomadcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// ErrNoSuchNode is Nodes' error for a name no node has.
var ErrNoSuchNode = errors.New("no such Nomad node")

// Node is a node to drain.
type Node struct{ ID, Name string }

// ShortID is the node ID's first eight characters, as Nomad's CLI prints it.
func (n Node) ShortID() string { return n.ID[:min(8, len(n.ID))] }

// Nodes resolves node names (or IDs) to drain; none names every node.
func (c *Cluster) Nodes(ctx context.Context, names []string) ([]Node, error) {
	stubs, _, err := c.client.Nodes().List((&nomadapi.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, c.explain(err)
	}
	var all []Node
	for _, s := range stubs {
		all = append(all, Node{ID: s.ID, Name: s.Name})
	}
	if len(names) == 0 {
		if len(all) == 0 {
			return nil, fmt.Errorf("nomad at %s has no client nodes to drain", c.addr)
		}
		return all, nil
	}
	var out []Node
	for _, name := range names {
		i := slices.IndexFunc(all, func(n Node) bool { return n.Name == name || n.ID == name })
		if i < 0 {
			return nil, fmt.Errorf("%s: %w (nodes: %s)", name, ErrNoSuchNode, strings.Join(nodeNames(all), ", "))
		}
		if !slices.Contains(out, all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// DrainAll first makes every node ineligible, then drains each with the
// deadline, so that work moved off one node is not placed on another about
// to be drained (Nomad's advice when draining several nodes); drained is
// told of each node as its drain starts. Nomad keeps a drained node
// ineligible itself, so nothing is checked after. reason is the drain's
// message (its meta), as `nomad node drain -meta message=...` sets it.
func (c *Cluster) DrainAll(ctx context.Context, nodes []Node, deadline time.Duration, reason string, drained func(Node)) error {
	for i, n := range nodes {
		if err := c.markIneligible(ctx, n); err != nil {
			return fmt.Errorf("%w (nothing drained; made ineligible before it: %v)", err, nodeNames(nodes[:i]))
		}
	}
	for i, n := range nodes {
		if err := c.drain(ctx, n, deadline, reason); err != nil {
			return fmt.Errorf("%w (nodes drained before it: %d %v)", err, i, nodeNames(nodes[:i]))
		}
		if drained != nil {
			drained(n)
		}
	}
	return nil
}

func (c *Cluster) markIneligible(ctx context.Context, n Node) error {
	if _, err := c.client.Nodes().ToggleEligibility(n.ID, false, (&nomadapi.WriteOptions{}).WithContext(ctx)); err != nil {
		return fmt.Errorf("mark node %s ineligible: %w", n.Name, c.explain(err))
	}
	return nil
}

// drain starts draining a node with a deadline.
func (c *Cluster) drain(ctx context.Context, n Node, deadline time.Duration, reason string) error {
	_, err := c.client.Nodes().UpdateDrainOpts(n.ID, &nomadapi.DrainOptions{
		DrainSpec: &nomadapi.DrainSpec{Deadline: deadline},
		Meta:      map[string]string{"message": reason},
	}, (&nomadapi.WriteOptions{}).WithContext(ctx))
	if err != nil {
		return fmt.Errorf("drain node %s: %w", n.Name, c.explain(err))
	}
	return nil
}

// nodeNames lists the nodes' names.
func nodeNames(ns []Node) []string {
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	return names
}
