package blobd

import (
	"testing"

	"github.com/harvest-platform/harvest/internal/connect"
)

// The maintainer's lock is under the configured prefix whether or not it
// ends in a slash ("harvest" used to give harvestblob/maintainer, outside
// the prefix every ACL policy scopes).
func TestTheMaintainerLockIsUnderThePrefix(t *testing.T) {
	for _, prefix := range []string{"harvest", "harvest/", ""} {
		c := Config{Consul: connect.Consul{Prefix: prefix}}
		if got := maintainerKey(c); got != "harvest/blob/maintainer" {
			t.Errorf("prefix %q: the maintainer lock is %q, want harvest/blob/maintainer", prefix, got)
		}
	}
}
