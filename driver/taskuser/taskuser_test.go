package taskuser

import (
	"strings"
	"testing"
)

// The default user, root and the deny lists decide who a task runs as.
func TestTaskUsers(t *testing.T) {
	for _, c := range []struct {
		cfg  Settings
		user string
		want string // "" = allowed
	}{
		{Settings{AllowRoot: true}, "root", ""},
		{Settings{DeniedHostUIDs: "65000-65534"}, "", "running as uid 65534 is disallowed"},
		{Settings{DeniedHostGIDs: "1"}, "daemon", "running as gid 1 is disallowed"},
		{Settings{}, "nosuchuser", "no user"},
	} {
		c.cfg.DefaultUser = "nobody"
		u, err := Parse(c.cfg)
		if err == nil {
			_, err = u.Resolve(c.user)
		}
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v user %q: %v, want %q", c.cfg, c.user, err, c.want)
		}
	}
}
