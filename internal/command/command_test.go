package command

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/cli"
)

type echoCommand struct{ ran *[]string }

func (e echoCommand) Synopsis() string { return "Echo the arguments" }
func (e echoCommand) Help() string     { return "Usage: x echo ARGS" }
func (e echoCommand) Run(args []string) int {
	*e.ran = args
	return 3
}

func TestRunDispatchesHelpAndVersion(t *testing.T) {
	var ran []string
	cmds := map[string]cli.CommandFactory{
		"echo": func() (cli.Command, error) { return echoCommand{ran: &ran}, nil },
	}
	cases := []struct {
		args     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"--help"}, 0, "Echo the arguments"},
		{[]string{"--version"}, 0, "harvest-test v"},
		{[]string{"version"}, 0, "harvest-test v"},
		{[]string{"echo", "a", "b"}, 3, ""},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		code := run("harvest-test", "Does tests.", tc.args, cmds, &out, &errOut)
		if code != tc.wantCode {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.wantCode, errOut.String())
		}
		if !strings.Contains(out.String()+errOut.String(), tc.wantOut) {
			t.Errorf("%v: output %q lacks %q", tc.args, out.String()+errOut.String(), tc.wantOut)
		}
	}
	if strings.Join(ran, " ") != "a b" {
		t.Fatalf("echo ran with %v", ran)
	}
}

func TestGroupAsksForASubcommand(t *testing.T) {
	c, err := Group("harvestctl explain", "Say why", "harvestctl explain <job|alloc>", "job", "alloc")()
	if err != nil {
		t.Fatal(err)
	}
	if code := c.Run(nil); code != 1 {
		t.Fatalf("a group run alone exits %d, want 1", code)
	}
	if !strings.Contains(c.Help(), "harvestctl explain <job|alloc>") {
		t.Fatalf("help %q", c.Help())
	}
}
