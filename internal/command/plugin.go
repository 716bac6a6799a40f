package command

import (
	"fmt"
	"os"

	"github.com/harvest-platform/harvest/internal/version"
)

// PluginHelpOrVersion answers a Nomad plugin binary run by hand: with
// -help it prints usage, with -version its version, and returns true; it
// returns false when Nomad (or anyone) runs it otherwise, to serve.
func PluginHelpOrVersion(name, usage string) bool {
	for _, arg := range os.Args[1:] {
		switch arg {
		case "-h", "-help", "--help":
			fmt.Print(usage)
			return true
		case "-v", "-version", "--version", "version":
			fmt.Println(version.String(name))
			return true
		}
	}
	return false
}
