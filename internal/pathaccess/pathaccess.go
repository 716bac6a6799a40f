// Package pathaccess tells whether a user can pass through every folder on
// the way to a path: the search (x) permission a process running as that
// user needs to make the path its working directory. The harvest driver uses
// it to say why a task user cannot reach its task directory, and the local
// cluster to keep its Nomad clients' data where harvested tasks can reach it.
//
// It reads the classic mode bits only (owner, group, other): a folder whose
// POSIX ACL grants more is reported as blocked, which errs on the side of a
// clear message.
package pathaccess

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// User is who must pass: a uid and every group it is in.
type User struct {
	Name string
	UID  uint32
	GIDs []uint32 // primary group first
}

// LookupUser finds name's uid and groups.
func LookupUser(name string) (User, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return User{}, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return User{}, fmt.Errorf("user %q: uid %q: %w", name, u.Uid, err)
	}
	out := User{Name: name, UID: uint32(uid)}
	ids := []string{u.Gid}
	if more, err := u.GroupIds(); err == nil {
		ids = append(ids, more...)
	}
	for _, id := range ids {
		if g, err := strconv.ParseUint(id, 10, 32); err == nil {
			out.GIDs = append(out.GIDs, uint32(g))
		}
	}
	return out, nil
}

// Blocked is the first folder a user cannot pass through.
type Blocked struct {
	Dir  string
	Mode os.FileMode
	UID  uint32 // the folder's owner
	GID  uint32
	User User
}

func (b *Blocked) Error() string {
	return fmt.Sprintf("user %s (uid %d) cannot pass through %s (mode %04o, owner uid %d, group gid %d)",
		b.User.Name, b.User.UID, b.Dir, b.Mode.Perm(), b.UID, b.GID)
}

// FirstBlocked walks from / down to path (path included, symlinks resolved)
// and returns the first folder u may not search, or nil when u reaches path.
// A path that does not exist is an error of its own, not a Blocked.
func FirstBlocked(path string, u User) (*Blocked, error) {
	if u.UID == 0 {
		return nil, nil // root passes every folder
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	for _, dir := range ancestors(real) {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return nil, errors.New("pathaccess: no owner information on this platform")
		}
		if !st.IsDir() {
			continue
		}
		if !canSearch(st.Mode(), sys.Uid, sys.Gid, u) {
			return &Blocked{Dir: dir, Mode: st.Mode(), UID: sys.Uid, GID: sys.Gid, User: u}, nil
		}
	}
	return nil, nil
}

// ancestors lists /, then each folder down to p, p last.
func ancestors(p string) []string {
	var out []string
	for {
		out = append(out, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// canSearch applies the kernel's order: the owner's bits for the owner, else
// the group's for a member, else the others'.
func canSearch(mode os.FileMode, ownerUID, ownerGID uint32, u User) bool {
	perm := mode.Perm()
	switch {
	case ownerUID == u.UID:
		return perm&0o100 != 0
	case inGroup(ownerGID, u.GIDs):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

func inGroup(gid uint32, gids []uint32) bool {
	for _, g := range gids {
		if g == gid {
			return true
		}
	}
	return false
}
