package testbed

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/placer/config"
)

// The placer's config follows the policy: H places by class and escalates
// (after the delay the run names, else the default), PT and stock do
// neither; the room placement is the run's. Each loads and decodes as the
// placer would.
func TestThePlacersConfigFollowsThePolicy(t *testing.T) {
	st := &localcluster.State{NomadServer: localcluster.Agent{HTTPAddr: "127.0.0.1:4646"}, ConsulServer: localcluster.Agent{HTTPAddr: "127.0.0.1:8500"},
		PlacerToken: "placer-token-0123456789"}
	for _, tc := range []struct {
		c           Config
		class, room string
		escalates   bool
		delay       time.Duration
	}{
		{Config{Policy: H}, "constraint", "constraint", true, 30 * time.Second},
		{Config{Policy: H, EscalationDelay: 3 * time.Second, RoomDevice: true}, "constraint", "device", true, 3 * time.Second},
		{Config{Policy: PT, NoRoomRule: true}, "none", "none", false, 0},
		{Config{Policy: Stock}, "none", "constraint", false, 0},
	} {
		path := filepath.Join(t.TempDir(), "placer.hcl")
		if err := os.WriteFile(path, []byte(tc.c.placerHCL(st, "127.0.0.1:7000", "127.0.0.1:7001")), 0o600); err != nil {
			t.Fatal(err)
		}
		loaded, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := loaded.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Proxy.ClassPlacement != tc.class || loaded.Proxy.RoomPlacement != tc.room || loaded.Escalation.Enabled != tc.escalates ||
			tc.escalates && s.Escalation.Delay != tc.delay {
			t.Errorf("%+v: class %q, room %q, escalation %+v; want %q, %q, escalating %v after %s",
				tc.c, loaded.Proxy.ClassPlacement, loaded.Proxy.RoomPlacement, s.Escalation, tc.class, tc.room, tc.escalates, tc.delay)
		}
	}
}

// An escalation delay is H's alone, never negative, and names the run.
func TestEscalationDelayIsANamedDeviationOfH(t *testing.T) {
	c := Default()
	c.Out, c.RunDir, c.Bin, c.StackBin = "o", "r", "b", "s"
	c.Policy, c.EscalationDelay = PT, 3*time.Second
	if err := c.Validate(); err == nil {
		t.Error("an escalation delay under PT was accepted")
	}
	c.Policy, c.EscalationDelay = H, -time.Second
	if err := c.Validate(); err == nil {
		t.Error("a negative escalation delay was accepted")
	}
	c.EscalationDelay = 3 * time.Second
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := (&Report{Policy: H, EscalationDelay: "3s"}).Label(); got != "h (escalation after 3s)" {
		t.Errorf("label %q", got)
	}
}
