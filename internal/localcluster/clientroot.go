package localcluster

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/pathaccess"
)

// TaskUser is who the harvest driver runs harvested tasks as (its
// default_user, which the cluster leaves at its default).
const TaskUser = "nobody"

// clientRootFor picks where the Nomad clients' folders go. Harvested tasks run
// as TaskUser and must pass through every folder above their task directory,
// so a run folder inside a clone whose parents are closed to other users
// (a 0700 home folder) cannot hold them: then the clients get a folder of
// their own under the system's temporary folder, and the log says so. When
// even that folder cannot be passed, nothing is started and the error names
// the folder, the user and the fix.
func clientRootFor(runDir string, log hclog.Logger) (string, error) {
	u, err := pathaccess.LookupUser(TaskUser)
	if err != nil {
		return "", fmt.Errorf("localcluster: the harvested tasks' user: %w", err)
	}
	// the run folder is the cluster's own: open it; its parents are not
	if err := os.MkdirAll(runDir, 0o711); err != nil {
		return "", err
	}
	if err := os.Chmod(runDir, 0o711); err != nil {
		return "", err
	}
	blocked, err := pathaccess.FirstBlocked(runDir, u)
	if err != nil {
		return "", err
	}
	if blocked == nil {
		return runDir, nil
	}
	tmp := os.TempDir()
	root, err := os.MkdirTemp(tmp, "harvest-clients-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(root, 0o711); err != nil {
		os.Remove(root)
		return "", err
	}
	if b, err := pathaccess.FirstBlocked(root, u); err != nil || b != nil {
		os.Remove(root)
		if err == nil {
			err = fmt.Errorf("localcluster: harvested tasks run as %s, who cannot pass through %s (mode %04o) above the run folder %s, nor through %s "+
				"above the temporary folder %s: let every user pass through one of them (chmod o+x %s, e.g. mode 0711) or set TMPDIR to a folder they can pass",
				TaskUser, blocked.Dir, blocked.Mode.Perm(), runDir, b.Dir, root, blocked.Dir)
		}
		return "", err
	}
	log.Warn("harvested tasks run as "+TaskUser+", who cannot pass through the run folder's path: the Nomad clients' folders go to a folder of their own",
		"blocked", blocked.Dir, "mode", fmt.Sprintf("%04o", blocked.Mode.Perm()), "client_root", root,
		"fix", "chmod o+x "+blocked.Dir+" keeps them in the run folder")
	return filepath.Clean(root), nil
}
