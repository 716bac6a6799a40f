package csvfmt

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harvest-platform/harvest/history"
)

// InventoryNode is one server of a datacenter's inventory: its primary
// tenant and, when known, its rack.
type InventoryNode struct {
	Tenant history.TenantID
	Node   string
	Rack   string // "" when not known
}

// ParseInventory reads tenant,node,rack rows (rack may be empty): every
// server of a datacenter, whether or not it was ever reimaged. A node
// listed twice is an error.
func ParseInventory(r io.Reader) ([]InventoryNode, error) {
	cr, err := newReader(r)
	if err != nil {
		return nil, err
	}
	if err := expectHeader(cr, "tenant", "node", "rack"); err != nil {
		return nil, err
	}
	var out []InventoryNode
	seen := map[string]int{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			if len(out) == 0 {
				return nil, errors.New("the inventory lists no node")
			}
			return out, nil
		}
		if err != nil {
			return nil, &LineError{line, err}
		}
		if len(rec) != 3 {
			return nil, &LineError{line, fmt.Errorf("%d fields, want 3 (tenant,node,rack)", len(rec))}
		}
		id, err := history.ParseTenantID(rec[0])
		if err != nil {
			return nil, &LineError{line, err}
		}
		node := strings.TrimSpace(rec[1])
		if node == "" {
			return nil, &LineError{line, errors.New("empty node")}
		}
		if first, dup := seen[node]; dup {
			return nil, &LineError{line, fmt.Errorf("node %q already listed on line %d", node, first)}
		}
		seen[node] = line
		out = append(out, InventoryNode{Tenant: id, Node: node, Rack: strings.TrimSpace(rec[2])})
	}
}
