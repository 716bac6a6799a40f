// Package taskuser decides who a harvested task runs as. A harvested task
// is someone else's code on the primary tenant's server, so by default it
// runs unprivileged: a task
// with no `user` runs as default_user (nobody), `user = "root"` (or any
// user with uid 0) is refused unless the operator sets allow_root, and
// denied_host_uids / denied_host_gids refuse host users and groups as
// Nomad's exec and raw_exec drivers do (same syntax: "0,10-100"; checked by
// Nomad's own validator).
package taskuser

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/drivers/shared/validators"
	"github.com/hashicorp/nomad/helper/users"

	"github.com/harvest-platform/harvest/internal/pathaccess"
)

// Policy is the checked user settings.
type Policy struct {
	defaultUser string
	allowRoot   bool
	deny        *validators.Validator // nil without deny lists
}

// Settings are the driver's user settings as its config gives them.
type Settings struct {
	DefaultUser    string // "" for nobody
	AllowRoot      bool
	DeniedHostUIDs string // Nomad's syntax: "0,10-100"
	DeniedHostGIDs string
}

// Parse checks s: the default user exists, and is neither root (unless
// allowed) nor denied.
func Parse(cfg Settings) (Policy, error) {
	u := Policy{defaultUser: cfg.DefaultUser, allowRoot: cfg.AllowRoot}
	if u.defaultUser == "" {
		u.defaultUser = "nobody"
	}
	uid, err := lookupUID(u.defaultUser)
	if err != nil {
		return u, fmt.Errorf("default_user: %w", err)
	}
	if uid == 0 && !u.allowRoot {
		return u, fmt.Errorf("default_user %q is root: set allow_root = true to run tasks as root", u.defaultUser)
	}
	if cfg.DeniedHostUIDs != "" || cfg.DeniedHostGIDs != "" {
		if u.deny, err = validators.NewValidator(hclog.NewNullLogger(), cfg.DeniedHostUIDs, cfg.DeniedHostGIDs); err != nil {
			return u, fmt.Errorf("denied_host_uids/denied_host_gids: %w", err)
		}
		if err := u.deny.HasValidIDs(u.defaultUser); err != nil {
			return u, fmt.Errorf("default_user %q is denied: %w", u.defaultUser, err)
		}
	}
	return u, nil
}

// DefaultUser is who a task with no user runs as.
func (u Policy) DefaultUser() string { return u.defaultUser }

// AllowRoot says whether a task may run as root.
func (u Policy) AllowRoot() bool { return u.allowRoot }

// Resolve is the user a task asking for user ("" for none) runs as, or why
// it may not run.
func (u Policy) Resolve(user string) (string, error) {
	if user == "" {
		user = u.defaultUser
	}
	uid, err := lookupUID(user)
	if err != nil {
		return "", fmt.Errorf("harvest: task user: %w", err)
	}
	if uid == 0 && !u.allowRoot {
		return "", fmt.Errorf("harvest: task user %q is root, which this node does not allow for harvested tasks (the driver's allow_root is false)", user)
	}
	if u.deny != nil {
		if err := u.deny.HasValidIDs(user); err != nil {
			return "", fmt.Errorf("harvest: task user %q: %w (the driver's denied_host_uids/denied_host_gids)", user, err)
		}
	}
	return user, nil
}

func lookupUID(name string) (uint64, error) {
	usr, err := users.Lookup(name)
	if err != nil {
		return 0, fmt.Errorf("no user %q: %w", name, err)
	}
	uid, err := strconv.ParseUint(usr.Uid, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("user %q: uid %q: %w", name, usr.Uid, err)
	}
	return uid, nil
}

// ReachTaskDir is nil when user can pass through every folder down to
// taskDir; otherwise it names the folder that stops it, the user and the fix.
// Without this check the executor's chdir fails after it has switched user,
// and Nomad shows "fork/exec <command>: permission denied", naming the
// command instead of the folder.
func ReachTaskDir(user, taskDir string) error {
	u, err := pathaccess.LookupUser(user)
	if err != nil {
		return fmt.Errorf("harvest: task user: %w", err)
	}
	blocked, err := pathaccess.FirstBlocked(taskDir, u)
	if err != nil {
		return fmt.Errorf("harvest: task directory %s: %w", taskDir, err)
	}
	if blocked == nil {
		return nil
	}
	return fmt.Errorf("harvest: task user %q (uid %d) cannot reach its task directory %s: %s is mode %04o, owner uid %d; "+
		"let every user pass through it (chmod o+x %s, e.g. mode 0711) or move the Nomad client's data_dir under a folder they can pass (docs/install.md)",
		user, u.UID, taskDir, blocked.Dir, blocked.Mode.Perm(), blocked.UID, blocked.Dir)
}
