// Package version owns the version string every Harvest binary reports.
package version

import (
	"fmt"
	"runtime"
)

// These are set at link time by the Makefile (-X); the defaults describe a
// plain `go build`.
var (
	// Version is the release version of Harvest.
	Version = "0.1.0"
	// Prerelease marks builds that are not a tagged release ("dev" by default).
	Prerelease = "dev"
	// GitCommit is the commit the binary was built from, when known.
	GitCommit = ""
)

// Number returns the bare version, such as "0.1.0-dev".
func Number() string {
	if Prerelease == "" {
		return Version
	}
	return Version + "-" + Prerelease
}

// String returns the human version line of the named binary, Nomad-style:
// "harvest-placer v0.1.0-dev (abc1234) go1.26".
func String(binary string) string {
	s := fmt.Sprintf("%s v%s", binary, Number())
	if GitCommit != "" {
		s += fmt.Sprintf(" (%s)", GitCommit)
	}
	return s + " " + runtime.Version()
}
