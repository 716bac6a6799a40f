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
	var out []InventoryNode
	seen := map[string]int{}
	err := tenantNodeRows(r, "rack", func(line int, id history.TenantID, node, rack string) error {
		if first, dup := seen[node]; dup {
			return fmt.Errorf("node %q already listed on line %d", node, first)
		}
		seen[node] = line
		out = append(out, InventoryNode{Tenant: id, Node: node, Rack: strings.TrimSpace(rack)})
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case len(out) == 0:
		return nil, errors.New("the inventory lists no node")
	}
	return out, nil
}
